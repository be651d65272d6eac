import { TranscriptStoreError } from "../errors.ts";
import { SessionManager } from "../session/session-manager.ts";
import { resolveSessionManagerOptions } from "../session/session-options.ts";
import { storedRewritesOf } from "../storage/stored-rewrites.ts";
import type { MaintenanceDriver, StoreFinding } from "../storage/store-drivers.ts";
import { formatBytes, lazyImages, storeOptions, UsageError, type CommandContext } from "./context.ts";
import { terminalText } from "./terminal-text.ts";
import { spaceTotalsText, storeSpaceTotals } from "./commands/accounting.ts";

/**
 * The maintenance commands (`gc`, `stats`, `verify`) against a store given by URL (`migrate --to` is migrate-to.ts).
 * Sessions commands (`ls`, `show`, `export`, `import`, `fork`, `mv`) need nothing of their own:
 * they go through `SessionManager` with the store. `stats` and `verify` ask the store's maintenance
 * driver (a store without one: `NOT_SUPPORTED`, "this store does not support stats").
 */
function maintenanceOf(ctx: CommandContext, what: string): MaintenanceDriver {
  const driver = storedRewritesOf(resolveSessionManagerOptions(storeOptions(ctx)).store, what);
  if (driver === null) throw new UsageError("this needs a store (--store URL or TRANSCRIPT_STORE_URL)");
  return driver;
}

export async function gcDatabase(ctx: CommandContext, graceMs: number): Promise<number> {
  if (ctx.values.also !== undefined || ctx.values.forget !== undefined) {
    throw new UsageError("--also and --forget are for file stores; a database store knows every session");
  }
  const dryRun = ctx.values["dry-run"] === true;
  const report = await SessionManager.gc({ ...storeOptions(ctx), graceMs, dryRun });
  for (const hash of report.deleted)
    ctx.emit({ type: dryRun ? "would-delete" : "deleted", hash }, terminalText`${dryRun ? "would delete" : "deleted"} ${hash}`);
  ctx.emit(
    { type: "summary", dryRun, deleted: report.deleted.length, bytesFreed: report.bytesFreed },
    `${dryRun ? "would delete" : "deleted"} ${report.deleted.length} blob(s) (${formatBytes(report.bytesFreed)})`,
  );
  return 0;
}

export async function statsDatabase(ctx: CommandContext): Promise<number> {
  const stats = await maintenanceOf(ctx, "stats").stats();
  const dedupRatio = stats.dedupRatio;
  const record = {
    type: "stats",
    ...stats,
    space: await storeSpaceTotals(ctx),
  };
  ctx.emit(
    record,
    `sessions: ${record.sessions} (${formatBytes(record.sessionBytes)})\n` +
      `blobs:    ${record.blobs} (${formatBytes(record.blobBytes)})\n` +
      `refs:     ${record.references} session→blob reference(s) to ${record.referencedBlobs} blob(s), ` +
      `dedup ratio ${dedupRatio.toFixed(2)}×\n` +
      spaceTotalsText(record.space),
  );
  return 0;
}

/** Every session's rows parse and link to their parents; every referenced blob exists and hashes to its name. */
export async function verifyDatabase(ctx: CommandContext): Promise<number> {
  const store = maintenanceOf(ctx, "verify");
  const findings: StoreFinding[] = [];
  const sessions = await SessionManager.listAll({ ...storeOptions(ctx), includeArchived: true });
  let entries = 0;
  for (const info of sessions) {
    let m: SessionManager;
    try {
      m = await SessionManager.open(info.id, { ...storeOptions(ctx), readOnly: true, ...lazyImages(ctx) });
    } catch (err) {
      // an encrypted session without its key (or failing it) is reported, as a file verify reports it, and the rest checked
      if (!(err instanceof TranscriptStoreError) || (err.code !== "KEY_REQUIRED" && err.code !== "DECRYPT_FAILED")) throw err;
      findings.push({ kind: "unreadable", session: info.id, message: `${err.code}: ${err.message}` });
      continue;
    }
    try {
      for (const bad of m.loadReport.malformed) findings.push({ kind: "malformed-row", session: info.id, message: bad.reason });
      const all = m.getEntries();
      entries += all.length;
      const ids = new Set(all.map((e) => e.id));
      for (const e of all) {
        if (e.parentId !== null && !ids.has(e.parentId)) {
          findings.push({
            kind: "dangling-parent",
            session: info.id,
            message: `entry ${e.id} names parent ${e.parentId}, which is absent`,
          });
        }
      }
    } finally {
      await m.close();
    }
  }
  findings.push(...(await store.verifyBlobs({ rehash: ctx.values["no-rehash"] !== true })));
  for (const f of findings) ctx.emit({ type: "finding", ...f }, terminalText`${f.kind.padEnd(18)} ${f.session ?? "-"}  ${f.message}`);
  ctx.emit(
    { type: "summary", sessions: sessions.length, entries, findings: findings.length },
    `${sessions.length} session(s), ${entries} entries, ${findings.length} finding(s)`,
  );
  return findings.length > 0 ? 1 : 0;
}
