import lockfile from "proper-lockfile";
import { errnoCode, TranscriptStoreError } from "../errors.ts";

/** Lock age after which a lock whose holder stopped refreshing it is taken over. @default 10000 */
export const DEFAULT_LOCK_STALE_MS = 10_000;

export interface SessionLockOptions {
  staleMs?: number;
  /** Called (once) when the lock was lost, e.g. its directory was removed or refreshed late. */
  onCompromised: (err: Error) => void;
}

/** A held single-writer lock on one session path. */
export interface SessionLock {
  readonly path: string;
  release(): Promise<void>;
}

/**
 * Takes the single-writer lock of a session file (a `<file>.lock` directory refreshed as a
 * heartbeat). Fails at once with `SESSION_LOCKED` when another live writer, in this process or
 * another, holds it; a lock whose holder died is taken over once stale.
 */
export async function acquireSessionLock(path: string, options: SessionLockOptions): Promise<SessionLock> {
  const stale = Math.max(2000, options.staleMs ?? DEFAULT_LOCK_STALE_MS);
  let released = false;
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(path, {
      stale,
      update: Math.max(1000, Math.floor(stale / 2)),
      retries: 0,
      realpath: false,
      onCompromised: (err) => {
        if (released) return;
        released = true;
        options.onCompromised(err);
      },
    });
  } catch (err) {
    if (errnoCode(err) === "ELOCKED") {
      throw new TranscriptStoreError("SESSION_LOCKED", `Session is locked by another writer: ${path}`, { path, cause: err });
    }
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not lock session ${path}: ${(err as Error).message}`, { path, cause: err });
  }
  return {
    path,
    async release() {
      if (released) return;
      released = true;
      try {
        await release();
      } catch {
        // Already released or compromised: nothing left to free.
      }
    },
  };
}
