import { constants } from "node:fs";
import { dirname } from "node:path";
import { errnoCode } from "./errors.ts";
import { copyFilePrivate, FILE_MODE, fsyncDir, io, removeQuietly, syncFile, tempPathFor, writeTempFile, writeTempFileFrom } from "./io.ts";

/**
 * The never-replace creators, beside the I/O seam (`io.ts`) and through it: each makes a name
 * only where nothing stands yet (a file, a planted symlink, which is never followed) and says so
 * (`false`) instead of writing over it. `io.ts`'s `writeFileAtomic` is their opposite, the one
 * replacer.
 */

/** What `link` fails with where the file system has no (more) hard links for this file. */
const LINK_UNSUPPORTED = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EMLINK"]);

/**
 * Creates an empty file (0600) at `path` only if the name is free (`wx`): the cross-process way to
 * claim a name (an artifact id, an import's target). False when anything is there already.
 */
export function createExclusive(path: string): boolean {
  try {
    io.closeSync(io.openSync(path, "wx", FILE_MODE));
    return true;
  } catch (err) {
    if (errnoCode(err) === "EEXIST") return false;
    throw err;
  }
}

/**
 * Moves a finished temp file to `finalPath` only if that name is free: a hard link fails with
 * EEXIST on anything already there, then the temp name is dropped. Where hard links are not
 * supported, a rename after an `lstat` check. Returns false (temp file removed) when the name is
 * taken.
 */
export function publishNew(tempPath: string, finalPath: string): boolean {
  try {
    io.linkSync(tempPath, finalPath);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "EEXIST") {
      removeQuietly(tempPath);
      return false;
    }
    if (code === undefined || !LINK_UNSUPPORTED.has(code)) throw err;
    if (io.lstatSync(finalPath, { throwIfNoEntry: false }) !== undefined) {
      removeQuietly(tempPath);
      return false;
    }
    io.renameSync(tempPath, finalPath);
    return true;
  }
  io.unlinkSync(tempPath);
  return true;
}

/**
 * Writes a new file at `target`: a temp file created exclusively (`wx`) is filled and published
 * with `publishNew`, so nothing already at the name is overwritten and a reader never sees half a
 * file. False when the name is taken.
 */
export function writeNew(target: string, data: Uint8Array, options: { fsync: boolean }): boolean {
  const temp = tempPathFor(target);
  // Only a temp file this call created is ever removed: whatever was planted at the name stays.
  writeTempFile(temp, (emit) => emit(data), options.fsync);
  try {
    if (!publishNew(temp, target)) return false;
  } catch (err) {
    removeQuietly(temp);
    throw err;
  }
  if (options.fsync) fsyncDir(dirname(target));
  return true;
}

/** `writeNew` for bytes that arrive in pieces (a stream): written through a temp file a piece at a time. */
export async function writeNewFrom(target: string, pieces: AsyncIterable<Uint8Array>, options: { fsync: boolean }): Promise<boolean> {
  const temp = tempPathFor(target);
  await writeTempFileFrom(temp, pieces, options.fsync);
  try {
    if (!publishNew(temp, target)) return false;
  } catch (err) {
    removeQuietly(temp);
    throw err;
  }
  if (options.fsync) fsyncDir(dirname(target));
  return true;
}

/**
 * Makes `to` a copy of `from` (kept) only if the name is free: a hard link where the file system
 * has them, else an exclusive copy, fsynced. False when anything is at `to` already.
 */
export function copyNew(from: string, to: string): boolean {
  try {
    io.linkSync(from, to);
    return true;
  } catch (err) {
    const code = errnoCode(err);
    if (code === "EEXIST") return false;
    if (code === undefined || !LINK_UNSUPPORTED.has(code)) throw err;
  }
  try {
    copyFilePrivate(from, to, constants.COPYFILE_EXCL);
  } catch (err) {
    if (errnoCode(err) === "EEXIST") return false;
    throw err;
  }
  syncFile(to);
  return true;
}
