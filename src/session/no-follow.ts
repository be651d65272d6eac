import { constants } from "node:fs";
import { errnoCode, TranscriptStoreError, type ErrorCode } from "../errors.ts";
import { FILE_MODE, io, writeFileAtomic } from "../io.ts";

/** O_NOFOLLOW where the platform has it (0 elsewhere: Windows has no such symlinks to plant). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** Opens an existing file for reading without following a symlink in its last component. */
export function openReadNoFollow(path: string): number {
  return io.openSync(path, constants.O_RDONLY | NOFOLLOW);
}

/**
 * Opens a file for appending (created 0600 when absent) without following a symlink planted at
 * its name: a link makes the open fail (`ELOOP`) instead of writing to whatever it points at.
 */
export function openAppendNoFollow(path: string): number {
  return io.openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NOFOLLOW, FILE_MODE);
}

/** True when `err` is what opening a planted symlink with no-follow semantics fails with. */
export function isSymlinkRefusal(err: unknown): boolean {
  const code = errnoCode(err);
  return code === "ELOOP" || code === "EMLINK";
}

/**
 * Writes a small file whole: exclusive-created temp file beside it, fsynced, renamed over it. A
 * symlink planted at `path` is refused with `code` (the rename would only replace the link, but a
 * planted link means someone is tampering with the store, so nothing is written at all).
 */
export function writeSmallFileNoFollow(path: string, data: Buffer, code: ErrorCode): void {
  refuseSymlink(path, code);
  writeFileAtomic(path, data, { fsync: true });
}

/** Throws `code` when `path` is a symlink. */
export function refuseSymlink(path: string, code: ErrorCode): void {
  let isLink = false;
  try {
    isLink = io.lstatSync(path).isSymbolicLink();
  } catch (err) {
    if (errnoCode(err) !== "ENOENT") throw err;
  }
  if (isLink) throw new TranscriptStoreError(code, `Refusing to write through a symlink planted at ${path}`, { path });
}
