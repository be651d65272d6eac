import type { Pool, PoolClient } from "./pg-client.ts";
import { TranscriptStoreError } from "../../../errors.ts";
import { withClient } from "./transaction.ts";

/*
 * The single-writer lease of a session lives in its row: `lease_holder`, `lease_expires` (server
 * clock) and `lease_token`, a fencing token that only ever grows. Taking the lease (free, or held
 * but expired) increments the token; every write checks `lease_token = $token` in its own
 * transaction while holding the row lock (`fenceSession`), so a writer whose lease was taken over
 * (a paused process, a partitioned host) is refused by the database, never trusted to stop.
 */

function checkTtl(ttlMs: number): void {
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) {
    throw new TranscriptStoreError("INVALID_OPTION", `A lease ttlMs must be a positive integer of milliseconds, not ${ttlMs}`);
  }
}

/** Why `sessionId`'s lease is not ours: the session is gone, or another holder has it. */
async function refusal(client: PoolClient, sessionId: string, doing: string): Promise<TranscriptStoreError> {
  const { rows } = await client.query<{ lease_holder: string | null; lease_expires: Date | null }>(
    "SELECT lease_holder, lease_expires FROM sessions WHERE id = $1",
    [sessionId],
  );
  const row = rows[0];
  if (row === undefined) return new TranscriptStoreError("SESSION_NOT_FOUND", `${doing}: no session ${sessionId}`);
  const by = row.lease_holder === null ? "released" : `held by ${row.lease_holder} until ${row.lease_expires?.toISOString()}`;
  return new TranscriptStoreError("SESSION_LOCKED", `${doing}: session ${sessionId} is not ours (lease ${by})`);
}

/** The shortest idle time a fenced transaction is allowed (when its lease is about to end or just ended). */
const MIN_IDLE_MS = 1000;

/** Takes the lease on `client` (inside the caller's transaction when there is one); returns the new token. */
export async function takeLease(client: PoolClient, sessionId: string, holder: string, ttlMs: number): Promise<number> {
  checkTtl(ttlMs);
  const { rows } = await client.query<{ lease_token: string }>(
    `UPDATE sessions SET lease_holder = $2, lease_token = lease_token + 1,
            lease_expires = clock_timestamp() + $3 * interval '1 millisecond'
      WHERE id = $1 AND (lease_holder IS NULL OR lease_expires <= clock_timestamp())
      RETURNING lease_token`,
    [sessionId, holder, ttlMs],
  );
  if (rows[0] === undefined) throw await refusal(client, sessionId, "Taking the session lease");
  return Number(rows[0].lease_token);
}

/**
 * Locks the session row for the rest of the caller's transaction if `token` is its current lease
 * token (and the lease was not released); returns the row's `last_seq`. Otherwise throws
 * `SESSION_LOCKED` (taken over or released) or `SESSION_NOT_FOUND`, and the caller's transaction
 * rolls back having written nothing. An expired lease nobody took over still fences correctly:
 * its token is still the newest.
 */
export async function fenceSession(client: PoolClient, sessionId: string, token: number, doing: string): Promise<number> {
  // The row lock must not outlive the lease: a writer paused mid-transaction (SIGSTOP, a blocked
  // event loop) would otherwise keep every taker waiting on the lock after its lease expired. So the
  // server ends this transaction if the writer leaves it idle longer than what is left of its lease
  // (at least MIN_IDLE_MS); the writer sees a lost connection, and its retry meets the fence.
  const { rows } = await client.query<{ last_seq: string }>(
    `SELECT last_seq, set_config('idle_in_transaction_session_timeout',
              GREATEST($3, ceil(extract(epoch FROM lease_expires - clock_timestamp()) * 1000))::bigint::text, true)
       FROM sessions WHERE id = $1 AND lease_token = $2 AND lease_holder IS NOT NULL FOR UPDATE`,
    [sessionId, token, MIN_IDLE_MS],
  );
  if (rows[0] === undefined) throw await refusal(client, sessionId, doing);
  return Number(rows[0].last_seq);
}

/** Acquire, renew and release a session's lease (see the comment at the top of lease.ts). */
export class PgLeases {
  constructor(private readonly pool: Pool) {}

  /**
   * Takes the lease for `ttlMs` when it is free or expired (`SESSION_LOCKED` otherwise,
   * `SESSION_NOT_FOUND` without the session); returns the fencing token, greater than every earlier one.
   */
  acquire(sessionId: string, holder: string, ttlMs: number): Promise<number> {
    return withClient(this.pool, "Taking the session lease", (client) => takeLease(client, sessionId, holder, ttlMs));
  }

  /** Extends the lease to `ttlMs` from now while `token` is current, else `SESSION_LOCKED`. */
  renew(sessionId: string, token: number, ttlMs: number): Promise<void> {
    checkTtl(ttlMs);
    return withClient(this.pool, "Renewing the session lease", async (client) => {
      const { rowCount } = await client.query(
        `UPDATE sessions SET lease_expires = clock_timestamp() + $3 * interval '1 millisecond'
          WHERE id = $1 AND lease_token = $2 AND lease_holder IS NOT NULL`,
        [sessionId, token, ttlMs],
      );
      if (rowCount === 0) throw await refusal(client, sessionId, "Renewing the session lease");
    });
  }

  /**
   * Who holds the session's lease and its current token; null when there is no such session. A
   * writer whose create-with-lease was not confirmed (the connection was lost at COMMIT) learns
   * from it whether that commit happened: the holder is its own unique name.
   */
  current(sessionId: string): Promise<{ holder: string | null; token: number } | null> {
    return withClient(this.pool, "Reading the session lease", async (client) => {
      const { rows } = await client.query<{ lease_holder: string | null; lease_token: string }>(
        "SELECT lease_holder, lease_token FROM sessions WHERE id = $1",
        [sessionId],
      );
      return rows[0] === undefined ? null : { holder: rows[0].lease_holder, token: Number(rows[0].lease_token) };
    });
  }

  /** Gives the lease up if `token` is current (the token is kept, so the next one is still greater); false when it was not ours. */
  release(sessionId: string, token: number): Promise<boolean> {
    return withClient(this.pool, "Releasing the session lease", async (client) => {
      const { rowCount } = await client.query(
        "UPDATE sessions SET lease_holder = NULL, lease_expires = NULL WHERE id = $1 AND lease_token = $2 AND lease_holder IS NOT NULL",
        [sessionId, token],
      );
      return rowCount === 1;
    });
  }
}
