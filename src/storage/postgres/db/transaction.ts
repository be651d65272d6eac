import type { Pool, PoolClient } from "./pg-client.ts";
import { toStoreError } from "./pg-errors.ts";

/** Isolation of a transaction; READ COMMITTED is the server default. */
export type Isolation = "READ COMMITTED" | "REPEATABLE READ";

/**
 * A pooled connection with an `error` listener for as long as it is checked out: a connection cut
 * between two statements (a server restart) emits `error` on the client, which would otherwise
 * crash the process; the next statement then fails and the connection is destroyed on release.
 */
async function checkout(pool: Pool, doing: string): Promise<{ client: PoolClient; release: (clean: boolean) => void }> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw toStoreError(err, doing);
  }
  let lost = false;
  const onError = () => (lost = true);
  client.on("error", onError);
  return {
    client,
    release: (clean) => {
      client.off("error", onError);
      client.release(clean && !lost ? undefined : true);
    },
  };
}

/**
 * Runs `fn` in one transaction on a pooled connection: BEGIN, `fn`, COMMIT; ROLLBACK when `fn` throws.
 * A connection is returned to the pool only when it is known clean (committed or rolled back);
 * otherwise it is destroyed. Every error leaves as a `TranscriptStoreError`: a failed COMMIT (the
 * connection lost while committing) is `PERSISTENCE_FAILED` with its cause, and then the outcome is
 * unknown, so writes that may be retried carry an idempotency key (an entry's seq).
 */
export async function withTransaction<T>(
  pool: Pool,
  doing: string,
  fn: (client: PoolClient) => Promise<T>,
  isolation: Isolation = "READ COMMITTED",
): Promise<T> {
  const { client, release } = await checkout(pool, doing);
  let clean = false;
  try {
    await client.query(isolation === "READ COMMITTED" ? "BEGIN" : `BEGIN ISOLATION LEVEL ${isolation}`);
    let result: T;
    try {
      result = await fn(client);
    } catch (err) {
      // the original error is the one to report; a failed ROLLBACK only leaves the connection unclean
      clean = await client.query("ROLLBACK").then(
        () => true,
        () => false,
      );
      throw err;
    }
    await client.query("COMMIT");
    clean = true;
    return result;
  } catch (err) {
    throw toStoreError(err, doing);
  } finally {
    release(clean);
  }
}

/** Statements on one pooled connection outside an explicit transaction (each its own); errors mapped as above. */
export async function withClient<T>(pool: Pool, doing: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const { client, release } = await checkout(pool, doing);
  let clean = false;
  try {
    const result = await fn(client);
    clean = true;
    return result;
  } catch (err) {
    throw toStoreError(err, doing);
  } finally {
    release(clean);
  }
}

/** The shortest idle bound a transaction is given (`boundIdle`). */
const MIN_IDLE_BOUND_MS = 1000;

/**
 * Bounds how long the caller's transaction may sit idle (its process paused: SIGSTOP, a blocked
 * event loop) before the server ends it, releasing the rows it inserted or locked (another writer
 * of the same blob waits on such a row): `ms`, at least a second. The writer then sees a lost
 * connection; its retry finds that nothing was written.
 */
export async function boundIdle(client: PoolClient, ms: number): Promise<void> {
  const bound = Math.max(MIN_IDLE_BOUND_MS, Math.ceil(ms));
  await client.query("SELECT set_config('idle_in_transaction_session_timeout', $1, true)", [String(bound)]);
}
