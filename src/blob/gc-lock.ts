import { join } from "node:path";
import lockfile from "proper-lockfile";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { io } from "../io.ts";

const STALE_MS = 10_000;

function lockError(blobsDir: string, err: unknown): TranscriptStoreError {
  if (errnoCode(err) === "ELOCKED")
    return new TranscriptStoreError("STORE_BUSY", "Another gc or forget is running on this blob store", { path: blobsDir, cause: err });
  return new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot lock the blob store: ${(err as Error).message}`, {
    path: blobsDir,
    cause: err,
  });
}

/**
 * One gc or forget at a time per blob store (`<blobsDir>/.gc.lock/`): a second waits, then gives up
 * with `STORE_BUSY`.
 */
export async function lockBlobStore(blobsDir: string): Promise<() => Promise<void>> {
  if (!io.existsSync(blobsDir)) return async () => {}; // no store: nothing to collect
  try {
    return await lockfile.lock(join(blobsDir, ".gc"), {
      realpath: false,
      stale: STALE_MS,
      retries: { retries: 40, factor: 1.3, minTimeout: 50, maxTimeout: 1000 },
      onCompromised: () => {},
    });
  } catch (err) {
    throw lockError(blobsDir, err);
  }
}

/** The same lock, taken without waiting (`STORE_BUSY` while a gc or another forget holds it). */
export function lockBlobStoreSync(blobsDir: string): () => void {
  try {
    return lockfile.lockSync(join(blobsDir, ".gc"), { realpath: false, stale: STALE_MS, onCompromised: () => {} });
  } catch (err) {
    throw lockError(blobsDir, err);
  }
}
