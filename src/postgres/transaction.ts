import type { Pool, PoolClient } from "pg";
import { toStoreError } from "./pg-errors.ts";

/** Isolation of a transaction; READ COMMITTED is the server default. */
export type Isolation = "READ COMMITTED" | "REPEATABLE READ";

/**
 * Listens to a checked-out connection's `error` event. The pool listens only to idle connections,
 * and a connection that dies while checked out (a server restart) emits `error` besides failing its
 * query: unheard, that event would end the process. The failure reaches the caller through the query.
 */
const heardWhileCheckedOut = () => {};

async function checkout(pool: Pool, doing: string): Promise<PoolClient> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw toStoreError(err, doing);
  }
  client.on("error", heardWhileCheckedOut);
  return client;
}

/** Back to the pool when known clean, else destroyed (see checkout for the listener). */
function checkin(client: PoolClient, clean: boolean): void {
  client.off("error", heardWhileCheckedOut);
  client.release(clean ? undefined : true);
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
  const client = await checkout(pool, doing);
  let clean = false;
  try {
    await client.query(isolation === "READ COMMITTED" ? "BEGIN" : `BEGIN ISOLATION LEVEL ${isolation}`);
    let result: T;
    try {
      result = await fn(client);
    } catch (err) {
      await client.query("ROLLBACK");
      clean = true;
      throw err;
    }
    await client.query("COMMIT");
    clean = true;
    return result;
  } catch (err) {
    throw toStoreError(err, doing);
  } finally {
    checkin(client, clean);
  }
}

/** Statements on one pooled connection outside an explicit transaction (each its own); errors mapped as above. */
export async function withClient<T>(pool: Pool, doing: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await checkout(pool, doing);
  let clean = false;
  try {
    const result = await fn(client);
    clean = true;
    return result;
  } catch (err) {
    throw toStoreError(err, doing);
  } finally {
    checkin(client, clean);
  }
}
