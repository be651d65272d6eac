import { withClient } from "../database/transaction.ts";
import { TranscriptStoreError } from "../errors.ts";
import { SessionManager } from "../session/session-manager.ts";
import { resolveSessionManagerOptions } from "../session/session-options.ts";
import type { PgStore } from "../database/index.ts";
import { storeUrlForms } from "../storage/backend-registry.ts";
import { formatBytes, lazyImages, storeOptions, UsageError, type CommandContext } from "./context.ts";
import { terminalText } from "./terminal-text.ts";
import { spaceTotalsText, storeSpaceTotals } from "./commands/accounting.ts";
import { blobHashOf } from "../blob/blob-ref.ts";

/**
 * The maintenance commands (`gc`, `stats`, `verify`) against a database store (`migrate --to` is migrate-to.ts).
 * Sessions commands (`ls`, `show`, `export`, `import`, `fork`, `mv`) need nothing of their own:
 * they go through `SessionManager` with the store.
 */
function databaseOf(ctx: CommandContext): Promise<PgStore> {
  const store = resolveSessionManagerOptions(storeOptions(ctx)).store as { connect?: () => Promise<PgStore> } | null;
  if (typeof store?.connect !== "function") throw new UsageError(`this needs --store ${storeUrlForms()}… (or TRANSCRIPT_STORE_URL)`);
  return store.connect();
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
  const store = await databaseOf(ctx);
  const one = async (sql: string) =>
    (await withClient(store.pool, "Reading statistics", (c) => c.query<Record<string, string>>(sql))).rows[0]!;
  const sessions = await one("SELECT count(*) AS n FROM sessions");
  const lines = await one("SELECT coalesce(sum(octet_length(line) + 1), 0) AS bytes FROM entries");
  const blobs = await one("SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes FROM blobs");
  const refs = await one(
    `SELECT count(*) AS n, count(DISTINCT r.sha256) AS blobs, coalesce(sum(b.size), 0) AS logical
       FROM blob_refs r JOIN blobs b USING (sha256)`,
  );
  const physical = await one("SELECT coalesce(sum(size), 0) AS bytes FROM blobs WHERE sha256 IN (SELECT sha256 FROM blob_refs)");
  const dedupRatio = Number(physical.bytes) > 0 ? Number(refs.logical) / Number(physical.bytes) : 1;
  const record = {
    type: "stats",
    sessions: Number(sessions.n),
    sessionBytes: Number(lines.bytes),
    blobs: Number(blobs.n),
    blobBytes: Number(blobs.bytes),
    references: Number(refs.n),
    referencedBlobs: Number(refs.blobs),
    dedupRatio,
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

interface DbFinding {
  kind: string;
  session: string | null;
  message: string;
}

/** Every session's rows parse and link to their parents; every referenced blob exists and hashes to its name. */
export async function verifyDatabase(ctx: CommandContext): Promise<number> {
  const store = await databaseOf(ctx);
  const findings: DbFinding[] = [];
  const sessions = await SessionManager.listAll(storeOptions(ctx));
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
  const { rows: missing } = await withClient(store.pool, "Verifying blob refs", (c) =>
    c.query<{ session_id: string; sha256: string }>(
      "SELECT r.session_id, r.sha256 FROM blob_refs r LEFT JOIN blobs b USING (sha256) WHERE b.sha256 IS NULL ORDER BY 1, 2",
    ),
  );
  for (const r of missing)
    findings.push({ kind: "blob-missing", session: r.session_id, message: `blob ${r.sha256} is referenced but absent` });
  if (ctx.values["no-rehash"] !== true) {
    let after = "";
    for (;;) {
      const { rows } = await withClient(store.pool, "Re-hashing blobs", (c) =>
        c.query<{ sha256: string; bytes: Buffer }>("SELECT sha256, bytes FROM blobs WHERE sha256 > $1 ORDER BY sha256 LIMIT 64", [after]),
      );
      if (rows.length === 0) break;
      for (const row of rows) {
        if (blobHashOf(row.bytes) !== row.sha256) {
          findings.push({ kind: "blob-corrupt", session: null, message: `blob ${row.sha256} does not hash to its name` });
        }
      }
      after = rows[rows.length - 1]!.sha256;
    }
  }
  for (const f of findings) ctx.emit({ type: "finding", ...f }, terminalText`${f.kind.padEnd(18)} ${f.session ?? "-"}  ${f.message}`);
  ctx.emit(
    { type: "summary", sessions: sessions.length, entries, findings: findings.length },
    `${sessions.length} session(s), ${entries} entries, ${findings.length} finding(s)`,
  );
  return findings.length > 0 ? 1 : 0;
}
