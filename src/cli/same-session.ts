import { isDeepStrictEqual } from "node:util";
import type { SessionEntry, SessionHeader } from "../format/types.ts";
import { SessionManager } from "../session/session-manager.ts";
import type { SessionManagerOptions } from "../session/session-options.ts";

/**
 * True when the session file at `path` holds exactly what an import brings: the same header, the
 * same entries (each as exported: images inline, or as stored with `--refs`) and as many damaged
 * lines. `export <id> | import` into the same store is then a no-op, not a failure.
 */
export async function storeCopyMatches(
  path: string,
  header: SessionHeader,
  entries: readonly SessionEntry[],
  damaged: number,
  options: SessionManagerOptions,
): Promise<boolean> {
  const copy = await SessionManager.open(path, { ...options, readOnly: true, rehydrate: "lazy", onWarning: () => {} });
  try {
    const stored = copy.getEntries();
    return (
      isDeepStrictEqual(copy.header, header) &&
      copy.loadReport.malformed.length + (copy.loadReport.tornTail ? 1 : 0) === damaged &&
      stored.length === entries.length &&
      stored.every((e, i) => isDeepStrictEqual(copy.rehydrate(e), entries[i]) || isDeepStrictEqual(copy.storage.asStored(e), entries[i]))
    );
  } finally {
    await copy.close();
  }
}
