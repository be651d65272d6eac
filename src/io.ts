import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/**
 * The one narrow I/O seam of the library. Every module that touches the disk calls through this
 * object, so tests can wrap a single function (fail the Nth `writeSync` with ENOSPC, count bytes
 * read) while everything else still hits the real file system.
 */
export const io = {
  openSync: fs.openSync,
  closeSync: fs.closeSync,
  readSync: fs.readSync,
  writeSync: fs.writeSync as (fd: number, buffer: Uint8Array, offset?: number, length?: number, position?: number | null) => number,
  fsyncSync: fs.fsyncSync,
  fdatasyncSync: fs.fdatasyncSync,
  ftruncateSync: fs.ftruncateSync,
  fstatSync: fs.fstatSync,
  statSync: fs.statSync,
  lstatSync: fs.lstatSync,
  readdirSync: fs.readdirSync,
  mkdirSync: fs.mkdirSync,
  renameSync: fs.renameSync,
  linkSync: fs.linkSync,
  unlinkSync: fs.unlinkSync,
  rmSync: fs.rmSync,
  rmdirSync: fs.rmdirSync,
  copyFileSync: fs.copyFileSync,
  utimesSync: fs.utimesSync,
  chmodSync: fs.chmodSync,
  existsSync: fs.existsSync,
  readFileSync: fs.readFileSync,
};

export type Io = typeof io;

/** Private modes (docs/format.md, Layout): transcripts are nobody else's business. */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

/**
 * Creates a directory (and parents) with the private mode. With `fsync`, every directory it
 * created and the parent of the first one are fsynced, so the new names survive power loss.
 */
export function ensureDir(dir: string, fsync = false): void {
  const first = io.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  if (fsync && first !== undefined) fsyncCreatedDirs(first, dir);
}

/**
 * fsyncs the directories a recursive mkdir created (`first`, what it returned, down to `dir`) and
 * the parent of `first`, where the first new name was made.
 */
export function fsyncCreatedDirs(first: string, dir: string): void {
  const top = resolve(first);
  for (let d = resolve(dir); ; d = dirname(d)) {
    fsyncDir(d);
    if (d === top || dirname(d) === d) break;
  }
  fsyncDir(dirname(top));
}

/**
 * The store's file copier: copies `from` to `to` (`flags` as `copyFileSync`'s) and gives the copy
 * the private mode (0600), whatever mode the source had (a pi session file or an artifact made
 * 0644 elsewhere): a copy never keeps a looser mode than the store's.
 */
export function copyFilePrivate(from: string, to: string, flags?: number): void {
  io.copyFileSync(from, to, flags);
  io.chmodSync(to, FILE_MODE);
}

/** Writes all of `data` at the fd's position, looping over short writes. */
export function writeFully(fd: number, data: Uint8Array, position: number | null = null): void {
  let off = 0;
  while (off < data.length) {
    const n = io.writeSync(fd, data, off, data.length - off, position === null ? null : position + off);
    if (n <= 0) throw Object.assign(new Error("short write"), { code: "EIO" });
    off += n;
  }
}

/**
 * What a directory fsync fails with where the platform or file system cannot do it at all
 * (Windows cannot open a directory, some file systems refuse fsync on one): durability there is
 * best effort. Anything else (EIO, ENOSPC…) means the new names may not be on disk, and is thrown.
 */
const DIR_FSYNC_UNSUPPORTED = new Set(["EINVAL", "ENOTSUP", "EOPNOTSUPP", "EISDIR", "EPERM", "EACCES", "EBADF"]);

/** fsyncs a directory so a rename or create inside it survives power loss. */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = io.openSync(dir, "r");
    io.fsyncSync(fd);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== "string" || !DIR_FSYNC_UNSUPPORTED.has(code)) throw err;
  } finally {
    if (fd !== undefined) io.closeSync(fd);
  }
}

/** The sha256 (64 lowercase hex) of an open file's bytes from its current position to its end, streamed. */
export function hashOpenFile(fd: number, chunkSize = 1 << 20): string {
  const hash = createHash("sha256");
  const buf = Buffer.allocUnsafe(chunkSize);
  for (let n = io.readSync(fd, buf, 0, buf.length, null); n > 0; n = io.readSync(fd, buf, 0, buf.length, null))
    hash.update(buf.subarray(0, n));
  return hash.digest("hex");
}

/** fsyncs the file at `path` (a copy made by `copyFileSync`, which does not). */
export function syncFile(path: string): void {
  const fd = io.openSync(path, "r");
  try {
    io.fsyncSync(fd);
  } finally {
    io.closeSync(fd);
  }
}

/**
 * True for the name of a temp file one of our writers leaves while writing: every one is a dot
 * name ending in `.tmp` (`tempPathFor`, which every writer uses, and gc's trash). The one rule for
 * session, blob and artifact directories alike. Nothing else that starts with a dot is ours:
 * `.session.jsonl` (pi's `open(path)` makes it) or a file under `sessions/.archive/` is a session
 * like any other.
 */
export function isTempFileName(name: string): boolean {
  return name.startsWith(".") && name.endsWith(".tmp");
}

/**
 * The one temp-name maker: a fresh name beside `target` for a file being written, a dot name
 * ending in `.tmp` (`isTempFileName`) that holds the writer's pid and random bytes, so two writers
 * never share one. `stem` replaces `target`'s own name where that may already be as long as a
 * file name can be (an artifact id of 255 bytes).
 */
export function tempPathFor(target: string, stem = basename(target)): string {
  return join(dirname(target), `.${stem}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
}

/** What a whole-file writer is given: a function that appends bytes to the file being written. */
export type FileWriter = (emit: (data: Uint8Array) => void) => void;

/**
 * Fills a new file at `temp`: created exclusively (`mode`, 0600 by default; a file or link already
 * at the name is refused, never followed or replaced), written through `write`, fsynced when asked,
 * closed. Returns the bytes written. On failure it removes the file only if this call created it.
 */
export function writeTempFile(temp: string, write: FileWriter, fsync: boolean, mode = FILE_MODE): number {
  let fd: number | undefined;
  let created = false;
  let size = 0;
  try {
    fd = io.openSync(temp, "wx", mode);
    created = true;
    const out = fd;
    write((data) => {
      writeFully(out, data);
      size += data.length;
    });
    if (fsync) io.fsyncSync(fd);
    io.closeSync(fd);
    fd = undefined;
  } catch (err) {
    closeQuietly(fd);
    if (created) removeQuietly(temp);
    throw err;
  }
  return size;
}

/**
 * `writeTempFile` for bytes that arrive in pieces (a stream): each piece written as it comes, so
 * the whole is never in memory; `onPiece` sees each (to hash it). Returns the bytes written.
 */
export async function writeTempFileFrom(
  temp: string,
  pieces: AsyncIterable<Uint8Array>,
  fsync: boolean,
  onPiece?: (data: Uint8Array) => void,
): Promise<number> {
  let fd: number | undefined;
  let created = false;
  let size = 0;
  try {
    fd = io.openSync(temp, "wx", FILE_MODE);
    created = true;
    for await (const data of pieces) {
      onPiece?.(data);
      writeFully(fd, data);
      size += data.length;
    }
    if (fsync) io.fsyncSync(fd);
    io.closeSync(fd);
    fd = undefined;
  } catch (err) {
    closeQuietly(fd);
    if (created) removeQuietly(temp);
    throw err;
  }
  return size;
}

/** Closes an fd on an error path, where a second error must not hide the first. */
export function closeQuietly(fd: number | undefined): void {
  if (fd === undefined) return;
  try {
    io.closeSync(fd);
  } catch {
    // already failing: the first error is the one to report
  }
}

/** Removes a file, ignoring any error (it may be gone already). */
export function removeQuietly(path: string): void {
  try {
    io.unlinkSync(path);
  } catch {
    // absent, or already failing for another reason
  }
}

export interface AtomicWriteOptions {
  /** fsync the new file before the rename and its directory after it. */
  fsync: boolean;
  /** Permission bits of the new file. @default FILE_MODE (0600) */
  mode?: number;
  /** Runs once the temp file is complete, just before the rename: throwing leaves `target` as it was. */
  beforeRename?: () => void;
}

/**
 * The one atomic replacer: writes a whole file (`data`, or the bytes `write` emits) into a temp
 * file beside `target` (`tempPathFor`, `writeTempFile`), which is (fsynced and) renamed over
 * `target`, replacing whatever is there without following it. On any failure (also one thrown by
 * `write` or `beforeRename`) the temp file is removed and `target` is as it was. Returns the bytes
 * written.
 */
export function writeFileAtomic(target: string, data: Uint8Array | FileWriter, options: AtomicWriteOptions): number {
  const temp = tempPathFor(target);
  const write: FileWriter = typeof data === "function" ? data : (emit) => emit(data);
  const size = writeTempFile(temp, write, options.fsync, options.mode);
  try {
    options.beforeRename?.();
    io.renameSync(temp, target);
  } catch (err) {
    removeQuietly(temp);
    throw err;
  }
  if (options.fsync) fsyncDir(dirname(target));
  return size;
}
