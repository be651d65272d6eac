import { join, relative, sep } from "node:path";
import { TranscriptStoreError } from "../errors.ts";
import { ensureDir, io } from "../io.ts";

/**
 * Creates the directory a session file goes in (private mode). Below the store's sessions root
 * every directory must be a real one: a symlink planted as a bucket would carry the session's
 * writes outside the store, so it is refused (`PERSISTENCE_FAILED`) and nothing is written.
 * The root itself, and directories outside it (sessions opened by explicit path), are the user's.
 * With `fsync`, every directory created is made durable (`ensureDir`).
 */
export function ensureSessionDir(dir: string, sessionsDir: string, fsync = false): void {
  try {
    ensureDir(dir, fsync);
  } catch (err) {
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot create session directory: ${(err as Error).message}`, {
      path: dir,
      cause: err,
    });
  }
  const rel = relative(sessionsDir, dir);
  if (rel === "" || rel.startsWith("..") || rel.startsWith(sep)) return;
  let at = sessionsDir;
  for (const part of rel.split(sep)) {
    at = join(at, part);
    if (io.lstatSync(at).isSymbolicLink()) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Refusing to write through a symlink planted in the sessions tree: ${at}`, {
        path: at,
      });
    }
  }
}
