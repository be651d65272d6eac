/**
 * The writer of session files: every byte written to a session file (or to its quarantine file,
 * its backup, or the temp file that becomes it) goes through this module's API, and nothing else
 * under src/ creates, appends to, rewrites or renames a session file into place. Reading is
 * `session-file-reader.ts`'s job. The API, all that a non-file backend would have to provide:
 *
 * - `SessionFile`: one session file held for writing. `openForAppend` (created 0600 when absent,
 *   never through a symlink: O_NOFOLLOW), `append` (whole lines, rolled back on failure),
 *   `repairTail` (torn tail into quarantine, cut off), `quarantine` (append records to the
 *   quarantine file beside it, O_NOFOLLOW, fsynced), `rewrite` (whole file, atomically), `sync`,
 *   `relocate` (after a move), `close`.
 * - `writeSessionFileAtomic`: a whole file from a stream of chunks, via an exclusive temp file
 *   renamed over it (fsynced, with its directory, when asked): the I/O seam's `writeFileAtomic`,
 *   named here so that every session-file writer is this module's.
 * - `SessionFileDraft`: a new file written beside its target under a temp name (`tempPathFor`)
 *   (created exclusively, 0600), made visible by `commit` or `renameIntoPlace` only.
 * - `backupSessionFile`: a copy beside the file that never replaces an earlier backup.
 *
 * Not here (yet): a move's rename of the quarantine file and artifacts directory and its removal
 * of the old file (session-move.ts, with their undo and crash recovery), and the empty placeholder
 * an import claims its target with (cli/commands/transfer.ts).
 */
import { constants } from "node:fs";
import { basename, dirname } from "node:path";
import { TranscriptStoreError } from "../errors.ts";
import type { MalformedLine } from "../format/load-report.ts";
import { copyNew } from "../io-exclusive.ts";
import { TORN_TAIL_REASON, type ParsedSession } from "../format/session-parser.ts";
import {
  type AtomicWriteOptions,
  copyFilePrivate,
  ensureDir,
  FILE_MODE,
  type FileWriter,
  fsyncDir,
  io,
  syncFile,
  tempPathFor,
  writeFileAtomic,
  writeFully,
} from "../io.ts";
import { forgetHandle, openWithRelief, touchHandle, type EvictableHandle } from "./append-handles.ts";
import { isSymlinkRefusal, openAppendNoFollow } from "./no-follow.ts";
import { quarantinePathOf } from "./paths.ts";
import { quarantineRecord, writeStreamedRecord } from "./quarantine-record.ts";

export interface SessionFileOptions {
  /** Data-sync every append and fsync rewrites (survives power loss). */
  fsync: boolean;
  /** Clock for quarantine timestamps. */
  now: () => Date;
}

/**
 * One session file held for writing: appends whole lines (never leaving a partial one), repairs a
 * torn tail into quarantine, and rewrites the file atomically (temp file + rename). Its descriptor
 * may be closed while idle (append-handles.ts bounds how many a process keeps): the next write
 * reopens it and refuses a file that was replaced or changed length meanwhile.
 */
export class SessionFile implements EvictableHandle {
  private fd: number | null = null;
  /** The file held (set at the first open, kept while the descriptor is evicted). */
  private identity: { dev: number; ino: number } | null = null;
  private size = 0;
  /** A failed append's line that could not be rolled back yet: roll back before the next write. */
  private pendingRollback: Buffer | null = null;

  constructor(
    public path: string,
    private readonly options: SessionFileOptions,
  ) {}

  /** Held for writing (its descriptor may be evicted until the next write). */
  get isOpen(): boolean {
    return this.fd !== null || this.identity !== null;
  }

  /** Current length in bytes of the file as this writer knows it. */
  get byteLength(): number {
    return this.size;
  }

  /** Opens for appending; the file is created (0600) when absent. */
  openForAppend(): void {
    if (this.fd !== null) {
      touchHandle(this);
      return;
    }
    if (this.identity !== null) {
      this.reopen();
      return;
    }
    try {
      ensureDir(dirname(this.path), this.options.fsync);
      // Readable too (a rollback checks what it cuts); a link planted at the path is not followed.
      const flags = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
      // Out of descriptors: other sessions' idle ones are given back first.
      const fd = openWithRelief(() => io.openSync(this.path, flags, FILE_MODE), this);
      let stat;
      try {
        stat = io.fstatSync(fd);
        // An empty file may be one this open created: its name is made durable before any line is.
        if (stat.size === 0 && this.options.fsync) fsyncDir(dirname(this.path));
      } catch (err) {
        io.closeSync(fd);
        throw err;
      }
      this.size = stat.size;
      this.fd = fd;
      this.identity = { dev: stat.dev, ino: stat.ino };
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot open session for writing: ${(err as Error).message}`, {
        path: this.path,
        cause: err,
      });
    }
    touchHandle(this);
  }

  /**
   * Reopens after an eviction: never creates, never follows a link, and refuses (nothing written)
   * a file that is not the one held (replaced, moved away) or whose length is not the known one.
   */
  private reopen(): void {
    const held = this.identity!;
    let fd: number;
    try {
      fd = openWithRelief(() => io.openSync(this.path, constants.O_RDWR | constants.O_APPEND | constants.O_NOFOLLOW), this);
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot reopen session for writing: ${(err as Error).message}`, {
        path: this.path,
        cause: err,
      });
    }
    let problem: string | null = null;
    try {
      const stat = io.fstatSync(fd);
      if (stat.dev !== held.dev || stat.ino !== held.ino) problem = "Session file was replaced under this writer; nothing was written";
      else if (stat.size !== this.size && this.pendingRollback === null)
        problem = `Session file changed under this writer (${stat.size} bytes, ${this.size} expected); nothing was written`;
    } catch (err) {
      problem = `Cannot check session file: ${(err as Error).message}`;
    }
    if (problem !== null) {
      io.closeSync(fd);
      throw new TranscriptStoreError("PERSISTENCE_FAILED", problem, { path: this.path });
    }
    this.fd = fd;
    touchHandle(this);
  }

  /** Closes the descriptor while idle; the next write reopens the same file (see `reopen`). */
  evict(): void {
    const fd = this.fd;
    if (fd === null) return;
    this.fd = null;
    try {
      io.closeSync(fd);
    } catch {
      // closing a broken descriptor cannot lose data that was already written
    }
  }

  /**
   * Makes the file safe to append to: a torn final fragment goes to quarantine and is cut off;
   * a final line that parsed but lacks its `\n` gets one. Returns true when anything changed.
   */
  repairTail(parsed: ParsedSession): boolean {
    if (parsed.tornTail === null && !parsed.missingFinalNewline) return false;
    this.openForAppend();
    const fd = this.fd!;
    try {
      if (parsed.tornTail !== null) {
        this.quarantine([{ offset: parsed.tornTail.offset, reason: TORN_TAIL_REASON, bytes: parsed.tornTail.bytes }]);
        io.ftruncateSync(fd, parsed.completeLength);
        this.size = parsed.completeLength;
      }
      if (parsed.missingFinalNewline) {
        writeFully(fd, Buffer.from("\n"));
        this.size += 1;
      }
      if (this.options.fsync) io.fdatasyncSync(fd);
    } catch (err) {
      if (err instanceof TranscriptStoreError) throw err;
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot repair torn tail: ${(err as Error).message}`, {
        path: this.path,
        cause: err,
      });
    }
    return true;
  }

  /**
   * Appends lines' raw bytes to the quarantine file beside the session. A line too large to hold
   * (`length` set) is streamed from its `source` file into a base64 record, never held whole.
   */
  quarantine(items: ReadonlyArray<Pick<MalformedLine, "offset" | "reason" | "bytes" | "length" | "source"> & { line?: number }>): void {
    if (items.length === 0) return;
    const at = this.options.now().toISOString();
    const source = basename(this.path);
    const qpath = quarantinePathOf(this.path);
    let fd: number | undefined;
    try {
      // Never through a symlink planted at its name: that would write outside the store.
      fd = openAppendNoFollow(qpath);
      const created = io.fstatSync(fd).size === 0;
      const out = fd;
      const small = items.filter((item) => item.length === undefined);
      if (small.length > 0) writeFully(out, Buffer.from(small.map((item) => quarantineRecord(source, item, at)).join("")));
      for (const item of items) if (item.length !== undefined) writeStreamedRecord(out, source, item, at);
      io.fsyncSync(fd);
      if (created) fsyncDir(dirname(qpath)); // always fsynced, like its bytes: it holds what was cut from the session
    } catch (err) {
      const why = isSymlinkRefusal(err) ? "a symlink is planted at its name" : (err as Error).message;
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot write quarantine file: ${why}`, { path: qpath, cause: err });
    } finally {
      if (fd !== undefined) io.closeSync(fd);
    }
  }

  /**
   * Appends quarantine records as another store kept them (an import carrying a session's
   * quarantine): each a JSON line without its `\n`, written as they are, fsynced like `quarantine`.
   */
  quarantineRecords(records: readonly string[]): void {
    if (records.length === 0) return;
    const qpath = quarantinePathOf(this.path);
    let fd: number | undefined;
    try {
      fd = openAppendNoFollow(qpath);
      const created = io.fstatSync(fd).size === 0;
      writeFully(fd, Buffer.from(records.map((r) => `${r}\n`).join("")));
      io.fsyncSync(fd);
      if (created) fsyncDir(dirname(qpath));
    } catch (err) {
      const why = isSymlinkRefusal(err) ? "a symlink is planted at its name" : (err as Error).message;
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot write quarantine file: ${why}`, { path: qpath, cause: err });
    } finally {
      if (fd !== undefined) io.closeSync(fd);
    }
  }

  /**
   * Appends one or more complete lines (each already ending in `\n`). Either every byte lands or
   * the file is cut back to its previous length and `PERSISTENCE_FAILED` is thrown. `data` is not
   * kept: the caller may reuse its memory afterwards.
   */
  append(data: Buffer): void {
    this.openForAppend();
    const fd = this.fd!;
    try {
      if (this.pendingRollback !== null) this.cutBackTo(fd, this.size, this.pendingRollback);
      writeFully(fd, data);
      if (this.options.fsync) io.fdatasyncSync(fd);
    } catch (err) {
      if (err instanceof TranscriptStoreError) throw err;
      // Kept for a later rollback: a copy, since the caller may reuse `data` once append returns.
      this.rollback(fd, Buffer.from(data));
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Append failed: ${(err as Error).message}`, { path: this.path, cause: err });
    }
    this.size += data.length;
  }

  private rollback(fd: number, attempted: Buffer): void {
    try {
      this.cutBackTo(fd, this.size, attempted);
    } catch (err) {
      if (err instanceof TranscriptStoreError) throw err;
      this.pendingRollback = attempted;
    }
  }

  /**
   * Cuts the file back to `size`, but only when what lies past it is a prefix of our own failed
   * line: anything else was written by someone else, and cutting would destroy their lines, so
   * nothing is cut, the failure is reported, and every later append refuses the same way.
   */
  private cutBackTo(fd: number, size: number, attempted: Buffer): void {
    const actual = io.fstatSync(fd).size;
    if (actual !== size) {
      const extra = actual - size;
      let ours = extra > 0 && extra <= attempted.length;
      if (ours) {
        const tail = Buffer.allocUnsafe(extra);
        ours = io.readSync(fd, tail, 0, extra, size) === extra && tail.equals(attempted.subarray(0, extra));
      }
      if (!ours) {
        this.pendingRollback = attempted;
        throw new TranscriptStoreError(
          "PERSISTENCE_FAILED",
          `Session file changed under this writer (${actual} bytes, ${size} expected); nothing was cut`,
          { path: this.path },
        );
      }
      io.ftruncateSync(fd, size);
    }
    this.pendingRollback = null;
  }

  /**
   * Replaces the whole file: the content is written to a temp file beside it and renamed over it,
   * so the previous content stays intact until the rename. `write` is called with a function that
   * appends bytes to the temp file.
   */
  rewrite(write: (emit: (data: Buffer) => void) => void): void {
    let size: number;
    try {
      ensureDir(dirname(this.path), this.options.fsync);
      size = writeSessionFileAtomic(this.path, write, { fsync: this.options.fsync });
    } catch (err) {
      // The rename may have happened (only the directory fsync failed): the descriptor may hold
      // the replaced file, so the next append reopens the name (and learns its length) instead.
      this.closeFd();
      if (err instanceof TranscriptStoreError) throw err;
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Rewrite failed: ${(err as Error).message}`, { path: this.path, cause: err });
    }
    // The rename committed the rewrite; the next append reopens the new file.
    this.closeFd();
    this.size = size;
  }

  /** Points this writer at a new path (after a move); the next append reopens there. */
  relocate(path: string): void {
    this.closeFd();
    this.path = path;
    this.pendingRollback = null;
  }

  /** Data-syncs what was appended. */
  sync(): void {
    if (this.fd === null && this.identity === null) return;
    // An evicted descriptor is reopened: what was appended through it is synced through the new one.
    this.openForAppend();
    try {
      io.fdatasyncSync(this.fd!);
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `fsync failed: ${(err as Error).message}`, { path: this.path, cause: err });
    }
  }

  private closeFd(): void {
    this.identity = null;
    forgetHandle(this);
    this.evict();
  }

  close(): void {
    this.closeFd();
  }
}

/**
 * Writes the whole file at `path` from the chunks `write` emits: into an exclusively created temp
 * file beside it (0600), (fsynced and) renamed over it; on failure the temp file is removed and
 * `path` is as it was. Errors are the file system's own. Returns the bytes written.
 */
export function writeSessionFileAtomic(path: string, write: FileWriter, options: AtomicWriteOptions): number {
  return writeFileAtomic(path, write, options);
}

/** Renames a finished draft at `temp` over `target` (the commit); fsyncs the directory when asked. */
export function renameIntoPlace(temp: string, target: string, fsync: boolean): void {
  io.renameSync(temp, target);
  if (fsync) fsyncDir(dirname(target));
}

/**
 * A new session file being written beside `target` under a temp name, created exclusively (0600;
 * an existing file or a link planted at that name fails the create). Nothing is visible at
 * `target` until `commit`. The caller decides when to `sync`, `close` and `discard`.
 */
export class SessionFileDraft {
  private fd: number | null;

  private constructor(
    readonly target: string,
    readonly path: string,
  ) {
    this.fd = io.openSync(path, "wx", FILE_MODE);
  }

  /** Creates the draft at `temp` (by default a fresh `tempPathFor(target)`). */
  static begin(target: string, temp = tempPathFor(target)): SessionFileDraft {
    return new SessionFileDraft(target, temp);
  }

  /** Appends all of `data`. */
  write(data: Buffer): void {
    writeFully(this.fd!, data);
  }

  /** fsyncs what was written. */
  sync(): void {
    io.fsyncSync(this.fd!);
  }

  /** Closes the temp file (once; later calls do nothing). */
  close(): void {
    const fd = this.fd;
    if (fd === null) return;
    this.fd = null;
    io.closeSync(fd);
  }

  /** Closes (if still open) and removes the temp file; a committed draft has none left to remove. */
  discard(): void {
    this.close();
    io.rmSync(this.path, { force: true });
  }

  /** Renames the closed draft over its target; fsyncs the directory when asked. */
  commit(fsync: boolean): void {
    renameIntoPlace(this.path, this.target, fsync);
  }
}

/**
 * Copies `source` to a backup beside it that no earlier backup occupies (`<file>.bak`, then
 * `<file>.2.bak`, …): written to a temp file and linked into place, so an existing backup is never
 * replaced and a crash never leaves a partial one. Returns the backup's path.
 */
export function backupSessionFile(source: string): string {
  const temp = tempPathFor(source);
  copyFilePrivate(source, temp);
  try {
    // Durable before the original is replaced: a backup lost to a power cut would be no backup.
    syncFile(temp);
    for (let n = 1; ; n++) {
      const bak = n === 1 ? `${source}.bak` : `${source}.${n}.bak`;
      if (copyNew(temp, bak)) {
        fsyncDir(dirname(bak));
        return bak;
      }
    }
  } finally {
    io.rmSync(temp, { force: true });
  }
}
