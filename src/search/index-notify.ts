import type { WarningHandler } from "../errors.ts";
import { io } from "../io.ts";
import { FileSessionIndex } from "./file-session-index.ts";
import { resolveSessionIndexOptions } from "./session-index.ts";

/** Where the index of a file tree is (as `openSessionIndex` places it). */
export interface IndexLocation {
  root?: string;
  sessionsDir: string;
  roots?: string[];
  indexPath?: string;
}

/**
 * Tells the tree's index (if one exists: none is created) that these session files changed in a
 * way their stats may not show (redact scrubbing only their artifacts), and catches it up at once:
 * their rows are read again, the rows and listing rows of what changed are rewritten, and what was
 * removed leaves no bytes in the index file (src/search/index-erasure.ts) when the caller returns.
 * A failure is a warning (`INDEX_UNAVAILABLE`): the sessions are the truth; `index --rebuild` then
 * brings the index level.
 */
export async function reindexChanged(location: IndexLocation, changed: readonly string[], onWarning: WarningHandler): Promise<void> {
  if (changed.length === 0) return;
  let index: FileSessionIndex | null = null;
  try {
    const resolved = resolveSessionIndexOptions({ ...location, onWarning });
    if (!io.existsSync(resolved.indexPath)) return;
    index = await FileSessionIndex.open(resolved);
    await index.forget(changed);
    await index.refresh();
  } catch (err) {
    onWarning({
      code: "INDEX_UNAVAILABLE",
      message: `The search index could not be brought up to date (${(err as Error).message}); run \`index --rebuild\``,
    });
  } finally {
    await index?.close();
  }
}

/**
 * After sessions left the store for good (`purge`): the tree's index, if one exists, is caught up
 * at once, so their texts and listing rows leave no bytes in it when the command returns (rather
 * than at the next search). A failure is a warning, as for `reindexChanged`.
 */
export async function catchUpIndex(location: IndexLocation, onWarning: WarningHandler): Promise<void> {
  let index: FileSessionIndex | null = null;
  try {
    const resolved = resolveSessionIndexOptions({ ...location, onWarning });
    if (!io.existsSync(resolved.indexPath)) return;
    index = await FileSessionIndex.open(resolved);
    await index.refresh();
  } catch (err) {
    onWarning({
      code: "INDEX_UNAVAILABLE",
      message: `The search index could not be brought up to date (${(err as Error).message}); run \`index --rebuild\``,
    });
  } finally {
    await index?.close();
  }
}
