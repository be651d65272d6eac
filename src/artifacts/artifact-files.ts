import { constants, type Dirent } from "node:fs";
import { errnoCode } from "../errors.ts";
import { io } from "../io.ts";

/**
 * The disk primitives of the artifacts directory, all through the `io` seam. Reads never follow
 * a symlink or block on a FIFO planted in the directory; writes go to a temp file that is renamed
 * into place, so a finished name never holds half a file and a hard-linked copy (fork) of a
 * finished file is never changed behind its back. Temp names are the I/O seam's (`tempPathFor`,
 * `isTempFileName`): the session's fork copier copies such in-flight names instead of hard-linking
 * them, and every scan here skips them.
 */

const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** Result of a guarded read: the bytes, `null` when absent, `"unsafe"` for a symlink or non-file. */
export type GuardedRead = Buffer | null | "unsafe";

/** Lists a directory's entries; a missing directory is empty. */
export function listEntries(dir: string): Dirent[] {
  try {
    return io.readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") return [];
    throw err;
  }
}

/** Opens a regular file for reading without following a symlink; null when absent, "unsafe" for anything else. */
export function openGuarded(path: string): number | null | "unsafe" {
  let fd: number;
  try {
    fd = io.openSync(path, READ_FLAGS);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    // ELOOP is what O_NOFOLLOW reports for a symlink; EMLINK on some BSDs.
    if (code === "ELOOP" || code === "EMLINK") return "unsafe";
    throw err;
  }
  try {
    if (!io.fstatSync(fd).isFile()) {
      io.closeSync(fd);
      return "unsafe";
    }
  } catch (err) {
    io.closeSync(fd);
    throw err;
  }
  return fd;
}

/** Reads a whole regular file without following symlinks. */
export function readGuarded(path: string): GuardedRead {
  const fd = openGuarded(path);
  if (fd === null || fd === "unsafe") return fd;
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.max(65536, Math.min(total, 16 << 20)));
      const n = io.readSync(fd, chunk, 0, chunk.length, null);
      if (n <= 0) break;
      chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
      total += n;
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  } finally {
    io.closeSync(fd);
  }
}

/** Reads at most `maxBytes` from the start of a regular file (for summaries of streamed files). */
export function readHeadGuarded(path: string, maxBytes: number): GuardedRead {
  const fd = openGuarded(path);
  if (fd === null || fd === "unsafe") return fd;
  try {
    const buf = Buffer.alloc(maxBytes);
    let off = 0;
    while (off < maxBytes) {
      const n = io.readSync(fd, buf, off, maxBytes - off, off);
      if (n <= 0) break;
      off += n;
    }
    return buf.subarray(0, off);
  } finally {
    io.closeSync(fd);
  }
}

/** Size of a regular file (not following symlinks), or null when absent or not a regular file. */
export function regularFileSize(path: string): number | null {
  try {
    const st = io.lstatSync(path);
    return st.isFile() ? st.size : null;
  } catch (err) {
    if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") return null;
    throw err;
  }
}

/** Unlinks a file; true when something was removed, false when it was already gone. */
export function removeFile(path: string): boolean {
  try {
    io.unlinkSync(path);
    return true;
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return false;
    throw err;
  }
}

/**
 * The state of the artifacts directory itself, looked at with `lstat` (never followed): a
 * symlink or a file planted where the directory belongs is "unsafe", so nothing is written
 * (or removed) through it.
 */
export function directoryState(dir: string): "missing" | "directory" | "unsafe" {
  try {
    return io.lstatSync(dir).isDirectory() ? "directory" : "unsafe";
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return "missing";
    throw err;
  }
}
