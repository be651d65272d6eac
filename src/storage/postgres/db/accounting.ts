import type { Pool } from "./pg-client.ts";
import { SessionAccountant, type SessionAccount } from "../../../accounting/session-account.ts";
import type { LedgerRow } from "../../../accounting/usage-report.ts";
import type { UsageRow } from "../../../accounting/usage-rows.ts";
import { readSession } from "./session-reads.ts";
import { withClient, withTransaction } from "./transaction.ts";

/**
 * Accounting and the usage ledger inside the database: the same pure accountant the file tree
 * uses, fed a session's header and rows (each row's line as a file line with its newline), so a
 * session counts the same bytes on either backend (its `body_bytes` plus its header line).
 */

/**
 * One session's account, streamed through a cursor (memory holds one batch of rows); null when
 * there is no such session. The header is line 1, the entry of seq N line N + 1.
 */
export async function accountPgSession(pool: Pool, sessionId: string): Promise<SessionAccount | null> {
  const head = await withClient(pool, "Reading a session header", (c) =>
    c.query<{ header: string; cwd: string }>("SELECT header, cwd FROM sessions WHERE id = $1", [sessionId]),
  );
  const row = head.rows[0];
  if (row === undefined) return null;
  const accountant = new SessionAccountant({ sessionId, cwd: row.cwd });
  accountant.addLine({ bytes: Buffer.from(row.header, "utf8"), lineNumber: 1, terminated: true });
  let line = 1;
  try {
    await readSession(pool, sessionId, (entries) => {
      for (const e of entries) accountant.addLine({ bytes: Buffer.from(e.line, "utf8"), lineNumber: ++line, terminated: true });
    });
  } catch (err) {
    if ((err as { code?: string }).code === "SESSION_NOT_FOUND") return null; // deleted meanwhile
    throw err;
  }
  return accountant.result();
}

/** What `accountPgStore` read: every session's account, and the sizes of artifacts and blobs. */
export interface PgStoreAccount {
  accounts: SessionAccount[];
  /** Bytes of each session's artifacts. */
  artifacts: Map<string, number>;
  blobSizes: Map<string, number>;
}

/**
 * Every session of the database accounted for in one read-only snapshot (REPEATABLE READ): one
 * cursor over all entries in (session, seq) order, `batchRows` a fetch, each session's header
 * first; a session without entries counts its header. `onSession` is called as each session
 * starts; when it throws (an interrupted CLI), the scan stops and that error is thrown as it is.
 */
export async function accountPgStore(
  pool: Pool,
  onSession?: (id: string) => void | Promise<void>,
  batchRows = 1000,
): Promise<PgStoreAccount> {
  let stopped: { err: unknown } | null = null;
  const result = await withTransaction(
    pool,
    "Accounting for the sessions",
    async (c) => {
      await c.query("SET TRANSACTION READ ONLY");
      const { rows: sessions } = await c.query<{ id: string; cwd: string; header: string }>("SELECT id, cwd, header FROM sessions");
      const pending = new Map(sessions.map((s) => [s.id, s]));
      const accounts: SessionAccount[] = [];
      // The session being read: rows come grouped by session (ORDER BY session_id, seq).
      const at: { id: string | null; accountant: SessionAccountant | null; line: number } = { id: null, accountant: null, line: 0 };
      const start = async (id: string): Promise<boolean> => {
        const session = pending.get(id)!;
        pending.delete(id);
        try {
          await onSession?.(id);
        } catch (err) {
          stopped = { err };
          return false;
        }
        at.id = id;
        at.accountant = new SessionAccountant({ sessionId: id, cwd: session.cwd });
        at.accountant.addLine({ bytes: Buffer.from(session.header, "utf8"), lineNumber: 1, terminated: true });
        at.line = 1;
        accounts.push(at.accountant.result());
        return true;
      };
      await c.query("DECLARE ts_accounting NO SCROLL CURSOR FOR SELECT session_id, line FROM entries ORDER BY session_id, seq");
      for (;;) {
        const batch = await c.query<{ session_id: string; line: string }>(`FETCH ${Math.max(1, Math.floor(batchRows))} FROM ts_accounting`);
        if (batch.rows.length === 0) break;
        for (const row of batch.rows) {
          if (at.id !== row.session_id && !(await start(row.session_id))) return null;
          at.accountant!.addLine({ bytes: Buffer.from(row.line, "utf8"), lineNumber: ++at.line, terminated: true });
        }
      }
      for (const id of [...pending.keys()]) if (!(await start(id))) return null;
      const { rows: artifactRows } = await c.query<{ session_id: string; bytes: string }>(
        "SELECT session_id, sum(size) AS bytes FROM artifacts GROUP BY session_id",
      );
      const { rows: blobRows } = await c.query<{ sha256: string; size: string }>("SELECT sha256, size FROM blobs");
      return {
        accounts,
        artifacts: new Map(artifactRows.map((r) => [r.session_id, Number(r.bytes)])),
        blobSizes: new Map(blobRows.map((r) => [r.sha256, Number(r.size)])),
      };
    },
    "REPEATABLE READ",
  );
  if (stopped !== null) throw (stopped as { err: unknown }).err;
  return result!;
}

/** The rows of the ledger of deleted sessions (`usage_ledger`). */
export async function readPgLedger(pool: Pool): Promise<LedgerRow[]> {
  const { rows } = await withClient(pool, "Reading the usage ledger", (c) =>
    c.query<{ row: UsageRow; deleted_at: Date }>("SELECT row, deleted_at FROM usage_ledger ORDER BY session_id, entry_key"),
  );
  return rows.map((r) => ({ ...r.row, deleted: true, deletedAt: r.deleted_at.toISOString() }));
}

/**
 * Writes usage rows to `usage_ledger` in one transaction; a row already there (same session and
 * key) is left as it is. Returns how many were written.
 */
export async function appendPgLedger(pool: Pool, rows: readonly UsageRow[], deletedAt: Date): Promise<number> {
  if (rows.length === 0) return 0;
  return withTransaction(pool, "Recording usage", async (c) => {
    let written = 0;
    for (const r of rows) {
      const result = await c.query(
        `INSERT INTO usage_ledger (session_id, entry_key, ts, row, deleted_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (session_id, entry_key) DO NOTHING`,
        [r.sessionId, r.key, r.timestamp, JSON.stringify(r), deletedAt],
      );
      written += result.rowCount ?? 0;
    }
    return written;
  });
}
