import { constants, type Stats } from "node:fs";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { io } from "../io.ts";

/** Bytes compared per read when checking a stored blob against known-good bytes. */
const COMPARE_CHUNK = 1 << 20;

/**
 * What identifies one version of a file on disk: inode, size and mtime. A blob proven right under
 * a stamp stays right until one of them changes (a rename, a truncation or an in-place write).
 */
export function stampOf(stat: Pick<Stats, "ino" | "size" | "mtimeMs">): string {
  return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
}

/** Opens a blob without following a symlink planted under its name; null when absent. */
function openNoFollow(path: string): number | null {
  try {
    return io.openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT") return null;
    if (code === "ELOOP")
      throw new TranscriptStoreError("BLOB_CORRUPT", "Blob path is a symlink; refusing to follow it", { path, cause: err });
    throw err;
  }
}

/** A blob's bytes and the stamp of the file they were read from. */
export interface BlobRead {
  bytes: Buffer;
  stamp: string;
}

/** Reads a blob without following a symlink (that is corruption, not data); null when absent. */
export function readBlobFile(path: string): BlobRead | null {
  const fd = openNoFollow(path);
  if (fd === null) return null;
  try {
    const stat = io.fstatSync(fd);
    const bytes = Buffer.allocUnsafe(stat.size);
    let off = 0;
    while (off < stat.size) {
      const n = io.readSync(fd, bytes, off, stat.size - off, off);
      if (n === 0) break;
      off += n;
    }
    return { bytes: off === stat.size ? bytes : bytes.subarray(0, off), stamp: stampOf(stat) };
  } finally {
    io.closeSync(fd);
  }
}

/**
 * True when the regular file at `path` holds exactly `expected`, read in bounded chunks (no second
 * full-size buffer). Any problem reading it (gone, a symlink, unreadable) counts as "not the same".
 */
export function fileHoldsBytes(path: string, expected: Uint8Array): boolean {
  let fd: number | null;
  try {
    fd = openNoFollow(path);
  } catch {
    return false;
  }
  if (fd === null) return false;
  const want = Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength);
  try {
    if (io.fstatSync(fd).size !== want.length) return false;
    const chunk = Buffer.allocUnsafe(Math.min(COMPARE_CHUNK, Math.max(want.length, 1)));
    let off = 0;
    for (;;) {
      const n = io.readSync(fd, chunk, 0, chunk.length, off);
      if (n === 0) return off === want.length;
      if (off + n > want.length || !chunk.subarray(0, n).equals(want.subarray(off, off + n))) return false;
      off += n;
    }
  } catch {
    return false;
  } finally {
    io.closeSync(fd);
  }
}
