import { basename, resolve } from "node:path";
import { TranscriptStoreError } from "../errors.ts";
import { resolveSessionManagerOptions } from "../session/session-options.ts";
import { backendOf } from "../storage/backends.ts";
import type { ImportOutcome } from "../storage/session-snapshot.ts";
import { isStoreUrl, storeFromUrl } from "../storage/store-url.ts";
import { lazyImages, storeOptions, UsageError, type CommandContext } from "./context.ts";
import { schemeOf, storeUrlForms } from "../storage/backend-registry.ts";
import { findSessionFiles } from "./find-files.ts";
import { startProgress } from "./progress.ts";
import { terminalText } from "./terminal-text.ts";

/** What `migrate --to` says of a session's header besides its status. */
const HEADER_NOTES = {
  same: "",
  updated: ", header brought across from the source (moved or renamed)",
  kept: ", header changed in the target store since the import: kept",
} as const;

/** `migrate --to`'s word for an import's outcome (`imported`, `updated`, `continued`, `unchanged`). */
function statusOf(done: ImportOutcome): string {
  if (done.status === "created") return "imported";
  if (done.status === "appended" || done.header === "updated") return "updated";
  if (done.relation === "storeAhead" || done.header === "kept") return "continued";
  return "unchanged";
}

/**
 * `migrate --to <store URL | directory>`: copies every session of the CLI's store (the file tree,
 * or `--store`) into the target through the storage seam (`exportSnapshot` → `importSnapshot`), ids
 * kept, blobs sent once. Positionals narrow the source: session files or directories of the file
 * tree, or session ids of a database. Re-running is safe (the one rule: unchanged, appended, or
 * IMPORT_CONFLICT reported for that session). Damaged lines stay in the source and are reported.
 */
export async function migrateTo(ctx: CommandContext, to: string): Promise<number> {
  if (schemeOf(to) !== null && !isStoreUrl(to)) throw new UsageError(`--to must be a ${storeUrlForms()} URL or a store root directory`);
  const source = resolveSessionManagerOptions({ ...storeOptions(ctx), ...lazyImages(ctx) });
  const target = isStoreUrl(to)
    ? resolveSessionManagerOptions({ store: storeFromUrl(to, { schema: ctx.storeConnect.schema }) })
    : resolveSessionManagerOptions({ root: resolve(ctx.io.cwd, to), layout: ctx.layout });
  const from = backendOf(source);
  const into = backendOf(target);
  const targetName = into.name ?? target.sessionsDir;
  const refs =
    source.store === null
      ? await findSessionFiles(ctx.positionals.length > 0 ? ctx.positionals : [ctx.dirs.sessionsDir], ctx.io.cwd)
      : ctx.positionals.length > 0
        ? ctx.positionals
        : (await from.list(null, source)).map((info) => info.path);
  const unit = source.store === null ? "file(s)" : "session(s)";
  const progress = startProgress(ctx.io, refs.length, "importing", ctx.json);
  let failed = 0;
  let damagedTotal = 0;
  try {
    for (const ref of refs) {
      try {
        const snapshot = await from.exportSnapshot(ref, source);
        const done = await into.importSnapshot(snapshot, target);
        const damaged = snapshot.damaged ?? 0;
        damagedTotal += damaged;
        const status = statusOf(done);
        const note = `${HEADER_NOTES[done.header]}${damaged > 0 ? `, ${damaged} damaged line(s) not imported (kept in the source)` : ""}`;
        ctx.emit(
          { type: "file", source: ref, status, id: done.id, header: done.header, entries: done.lines, damaged, location: done.location },
          terminalText`${status.padEnd(9)} ${done.id} (${done.lines} entries${note})  ${ref}`,
        );
      } catch (err) {
        failed++;
        const code = err instanceof TranscriptStoreError ? err.code : "PERSISTENCE_FAILED";
        ctx.emit(
          { type: "file", source: ref, status: "failed", code, message: (err as Error).message },
          terminalText`failed    ${ref}: ${code}: ${(err as Error).message}`,
        );
      }
      await progress.tick(basename(ref));
    }
  } finally {
    progress.stop();
  }
  ctx.emit(
    { type: "summary", files: refs.length, failed, damaged: damagedTotal, to: targetName },
    terminalText`${refs.length} ${unit} into ${targetName}: ${failed} failed, ` +
      `${damagedTotal} damaged line(s) left in their source files`,
  );
  return failed > 0 ? 1 : 0;
}
