import { createHash } from "node:crypto";
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

/** Bytes read (and hashed, when asked) per step of a one-pass read: small enough to stay in cache. */
const HASH_CHUNK = 256 * 1024;

/**
 * How far in the past a blob's mtime is set when this store writes (or refreshes) it: beyond the
 * proof log's racy window (RACY_MS, 2 s) with a margin, on an even second (FAT's 2 s granularity).
 * Any later in-place write gives the file the current time, so it no longer matches a proof taken
 * under the settled mtime, and such a proof can be logged at once (a later process trusts the blob
 * from its first read on) instead of only once the file has aged past the racy window.
 */
const SETTLE_MS = 4000;

/** The mtime a blob gets when written or refreshed by a store (see SETTLE_MS). */
export function settledMtime(now = Date.now()): Date {
  return new Date(Math.floor((now - SETTLE_MS) / 2000) * 2000);
}

/** A blob's bytes, the stamp of the file they were read from, and their sha256 when it was asked for. */
export interface BlobRead {
  bytes: Buffer;
  stamp: string;
  /** Hex sha256 of `bytes`, computed during the read; null when `hashIf` said no. */
  sha256: string | null;
}

/**
 * Reads a blob without following a symlink (that is corruption, not data); null when absent.
 * `hashIf(stamp)` (asked once the file's stamp is known) decides whether the bytes are hashed as
 * they are read: one pass over each chunk while it is in cache, not a read and then a hash.
 */
export function readBlobFile(path: string, hashIf?: (stamp: string) => boolean): BlobRead | null {
  const fd = openNoFollow(path);
  if (fd === null) return null;
  try {
    const stat = io.fstatSync(fd);
    const stamp = stampOf(stat);
    const hasher = hashIf?.(stamp) === true ? createHash("sha256") : null;
    const bytes = Buffer.allocUnsafe(stat.size);
    const step = hasher === null ? stat.size : HASH_CHUNK;
    let off = 0;
    while (off < stat.size) {
      const n = io.readSync(fd, bytes, off, Math.min(step, stat.size - off), off);
      if (n === 0) break;
      hasher?.update(bytes.subarray(off, off + n));
      off += n;
    }
    const read = off === stat.size ? bytes : bytes.subarray(0, off);
    return { bytes: read, stamp, sha256: hasher === null ? null : hasher.digest("hex") };
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
