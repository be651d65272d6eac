import { constants } from "node:fs";
import { basename, dirname } from "node:path";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import type { MalformedLine } from "../format/load-report.ts";
import type { ParsedSession } from "../format/session-parser.ts";
import { ensureDir, FILE_MODE, io, writeFileAtomic, writeFully } from "../io.ts";
import { isSymlinkRefusal, openAppendNoFollow } from "./no-follow.ts";
import { quarantinePathOf } from "./paths.ts";
import { DEFAULT_CHUNK_SIZE } from "./session-scan.ts";
import { quarantineRecord, writeStreamedRecord } from "./quarantine-record.ts";

export { DEFAULT_CHUNK_SIZE, scanLimits, scanSessionFile } from "./session-scan.ts";

export interface SessionFileOptions {
  /** Data-sync every append and fsync rewrites (survives power loss). */
  fsync: boolean;
  /** Clock for quarantine timestamps. */
  now: () => Date;
}

/**
 * The only owner of a session file's bytes: appends whole lines (never leaving a partial one),
 * repairs a torn tail into quarantine, and rewrites the file atomically (temp file + rename).
 */
export class SessionFile {
  private fd: number | null = null;
  private size = 0;
  /** A failed append's line that could not be rolled back yet: roll back before the next write. */
  private pendingRollback: Buffer | null = null;

  constructor(
    public path: string,
    private readonly options: SessionFileOptions,
  ) {}

  get isOpen(): boolean {
    return this.fd !== null;
  }

  /** Current length in bytes of the file as this writer knows it. */
  get byteLength(): number {
    return this.size;
  }

  /** Opens for appending; the file is created (0600) when absent. */
  openForAppend(): void {
    if (this.fd !== null) return;
    try {
      ensureDir(dirname(this.path));
      // Readable too (a rollback checks what it cuts); a link planted at the path is not followed.
      const flags = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
      const fd = io.openSync(this.path, flags, FILE_MODE);
      this.size = io.fstatSync(fd).size;
      this.fd = fd;
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot open session for writing: ${(err as Error).message}`, { path: this.path, cause: err });
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
        this.quarantine([{ offset: parsed.tornTail.offset, reason: "torn tail (unterminated final line)", bytes: parsed.tornTail.bytes }]);
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
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot repair torn tail: ${(err as Error).message}`, { path: this.path, cause: err });
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
      const out = fd;
      const small = items.filter((item) => item.length === undefined);
      if (small.length > 0) writeFully(out, Buffer.from(small.map((item) => quarantineRecord(source, item, at)).join("")));
      for (const item of items) if (item.length !== undefined) writeStreamedRecord(out, source, item, at);
      io.fsyncSync(fd);
    } catch (err) {
      const why = isSymlinkRefusal(err) ? "a symlink is planted at its name" : (err as Error).message;
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot write quarantine file: ${why}`, { path: qpath, cause: err });
    } finally {
      if (fd !== undefined) io.closeSync(fd);
    }
  }

  /**
   * Appends one or more complete lines (each already ending in `\n`). Either every byte lands or
   * the file is cut back to its previous length and `PERSISTENCE_FAILED` is thrown.
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
      this.rollback(fd, data);
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
      ensureDir(dirname(this.path));
      size = writeFileAtomic(this.path, write as (emit: (data: Uint8Array) => void) => void, { fsync: this.options.fsync });
    } catch (err) {
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
    if (this.fd === null) return;
    try {
      io.fdatasyncSync(this.fd);
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `fsync failed: ${(err as Error).message}`, { path: this.path, cause: err });
    }
  }

  private closeFd(): void {
    if (this.fd === null) return;
    try {
      io.closeSync(this.fd);
    } catch {
      // closing a broken descriptor cannot lose data that was already written
    }
    this.fd = null;
  }

  close(): void {
    this.closeFd();
  }
}


const HEADER_TYPE = /"type"\s*:\s*"session"/;

/**
 * Byte offset just past the header line (and an omp title line before it), found by reading the
 * head of the file in chunks, however long the header line is. Returns null when neither of the
 * first two non-blank lines is a header.
 */
export function headerEndOffset(path: string, chunkSize = 1 << 16): number | null {
  const fd = io.openSync(path, "r");
  try {
    const chunk = Buffer.allocUnsafe(chunkSize);
    let pending: Buffer[] = [];
    let position = 0;
    let nonBlank = 0;
    for (;;) {
      const n = io.readSync(fd, chunk, 0, chunkSize, position);
      if (n === 0) return null;
      const data = chunk.subarray(0, n);
      let start = 0;
      for (let nl = data.indexOf(0x0a); nl !== -1; nl = data.indexOf(0x0a, start)) {
        const text = Buffer.concat([...pending, data.subarray(start, nl)]).toString("utf8");
        pending = [];
        if (HEADER_TYPE.test(text)) return position + nl + 1;
        if (text.replace(/\0/g, "").trim().length > 0 && ++nonBlank >= 2) return null;
        start = nl + 1;
      }
      if (start < n) pending.push(Buffer.from(data.subarray(start)));
      position += n;
    }
  } finally {
    io.closeSync(fd);
  }
}

/** Streams the bytes of `path` from `offset` to its end through `emit`. */
export function copyFileFrom(path: string, offset: number, emit: (data: Buffer) => void, chunkSize = DEFAULT_CHUNK_SIZE): void {
  const fd = io.openSync(path, "r");
  const buffer = Buffer.allocUnsafe(chunkSize);
  try {
    let position = offset;
    for (;;) {
      const n = io.readSync(fd, buffer, 0, chunkSize, position);
      if (n === 0) break;
      emit(buffer.subarray(0, n));
      position += n;
    }
  } finally {
    io.closeSync(fd);
  }
}
