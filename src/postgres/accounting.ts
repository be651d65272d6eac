import type { Pool } from "./pg-client.ts";
import { SessionAccountant, type SessionAccount } from "../accounting/session-account.ts";
import type { LedgerRow } from "../accounting/usage-report.ts";
import type { UsageRow } from "../accounting/usage-rows.ts";
import { readSession } from "./session-reads.ts";
import { withClient, withTransaction } from "./transaction.ts";

/**
 * Accounting and the usage ledger inside the database: the same pure accountant the file tree
 * uses, fed a session's header and rows (each row's line as a file line with its newline), so a
 * session counts the same bytes on either backend (its `body_bytes` plus its header line).
 */

/** Every session's id and cwd, by id. */
export async function pgSessionIds(pool: Pool): Promise<{ id: string; cwd: string }[]> {
  const { rows } = await withClient(pool, "Listing sessions", (c) =>
    c.query<{ id: string; cwd: string }>("SELECT id, cwd FROM sessions ORDER BY id"),
  );
  return rows;
}

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

/** Every blob and its size. */
export async function pgBlobSizes(pool: Pool): Promise<Map<string, number>> {
  const { rows } = await withClient(pool, "Reading blob sizes", (c) =>
    c.query<{ sha256: string; size: string }>("SELECT sha256, size FROM blobs"),
  );
  return new Map(rows.map((r) => [r.sha256, Number(r.size)]));
}

/** The bytes of each session's artifacts. */
export async function pgArtifactBytes(pool: Pool): Promise<Map<string, number>> {
  const { rows } = await withClient(pool, "Reading artifact sizes", (c) =>
    c.query<{ session_id: string; bytes: string }>("SELECT session_id, sum(size) AS bytes FROM artifacts GROUP BY session_id"),
  );
  return new Map(rows.map((r) => [r.session_id, Number(r.bytes)]));
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
