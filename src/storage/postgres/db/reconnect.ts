import { TranscriptStoreError } from "../../../errors.ts";
import { isConnectionError } from "./pg-errors.ts";

/**
 * Waits between the attempts of a write whose connection was lost (a server restart or failover):
 * about 6 s in all; then the failure is reported (flush() throws PERSISTENCE_FAILED, the entries
 * stay queued for the next flush). Only a lost connection is retried, never a refusal
 * (SESSION_LOCKED, a rejected row). Retrying is safe: a batch carries its seqs (an ambiguous commit
 * is found stored, not stored twice), artifact writes are upserts and deletes, and a create looks
 * first whether its earlier attempt committed.
 */
export const RECONNECT_DELAYS_MS: readonly number[] = [50, 100, 200, 400, 800, 1600, 3000];

/** True for a PERSISTENCE_FAILED whose cause is a lost or refused connection (see isConnectionError). */
export function connectionLost(err: unknown): boolean {
  return err instanceof TranscriptStoreError && err.code === "PERSISTENCE_FAILED" && isConnectionError(err.cause);
}

/**
 * Runs `write`, and again after each lost connection while RECONNECT_DELAYS_MS lasts. `stop` is
 * asked after each wait: an error it returns (the lease is known lost) ends the retries.
 */
export async function reconnecting<T>(write: () => Promise<T>, stop: () => Error | null): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      const delay = RECONNECT_DELAYS_MS[attempt];
      if (delay === undefined || !connectionLost(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, delay));
      const stopped = stop();
      if (stopped !== null) throw stopped;
    }
  }
}
