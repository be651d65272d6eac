/** One line cut out of a byte stream, without its `\n`. */
export interface ScannedLine {
  /**
   * The line's bytes (no trailing LF). May share memory with the pushed chunk. For a line longer
   * than `maxLineBytes` only its first `keepBytes` bytes (see `fullLength`).
   */
  bytes: Buffer;
  /** Byte offset of the line's first byte in the stream. */
  offset: number;
  /** 1-based line number. */
  lineNumber: number;
  /** False only for a final line that the stream ended without a `\n`. */
  terminated: boolean;
  /** Set only for a line longer than `maxLineBytes`: its whole length (`bytes` is a prefix). */
  fullLength?: number;
}

export interface LineSplitterOptions {
  /** Longest line gathered whole; a longer one is emitted as a prefix + its length. @default Infinity */
  maxLineBytes?: number;
  /** Bytes of an over-long line kept to classify it. @default 64 KiB */
  keepBytes?: number;
  /**
   * A line gathered from several chunks is assembled in one buffer the splitter reuses, so its
   * `bytes` are valid only until `onLine` returns (copy what you keep). Saves a copy and an
   * allocation per such line. Over-long lines are unaffected. @default false
   */
  reuseBuffer?: boolean;
}

const LF = 0x0a;
const DEFAULT_KEEP_BYTES = 64 * 1024;

/**
 * A push-based byte line splitter: feed it chunks of any size, it emits whole lines. Lines are cut
 * at the byte 0x0A only, so a multi-byte UTF-8 character split across two chunks is reassembled
 * untouched, and a line longer than any chunk is gathered from its pieces. A line longer than
 * `maxLineBytes` is never gathered: memory stays bounded by its kept prefix. Pure: no I/O.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingLength = 0;
  private pendingOffset = 0;
  /** Bytes of the pending line seen so far (more than `pendingLength` once it is over-long). */
  private lineLength = 0;
  private position = 0;
  private lineNumber = 0;
  private readonly maxLineBytes: number;
  private readonly keepBytes: number;
  /** With `reuseBuffer`: where a line is gathered; `gathering` says the pending bytes are there. */
  private gather: Buffer | null = null;
  private gathering = false;
  private readonly reuse: boolean;

  constructor(
    private readonly onLine: (line: ScannedLine) => void,
    options: LineSplitterOptions = {},
  ) {
    this.maxLineBytes = options.maxLineBytes ?? Infinity;
    this.keepBytes = Math.min(options.keepBytes ?? DEFAULT_KEEP_BYTES, this.maxLineBytes);
    this.reuse = options.reuseBuffer === true;
  }

  /** Total bytes pushed so far. */
  get bytesSeen(): number {
    return this.position;
  }

  push(chunk: Buffer): void {
    let start = 0;
    const base = this.position;
    this.position += chunk.length;
    for (;;) {
      const nl = chunk.indexOf(LF, start);
      if (nl === -1) break;
      if (this.lineLength === 0) this.pendingOffset = base + start;
      const length = this.lineLength + (nl - start);
      if (length > this.maxLineBytes) {
        this.keep(chunk.subarray(start, nl), false);
        this.emit(true, length);
      } else if (this.pendingLength > 0) {
        this.add(chunk.subarray(start, nl), false);
        this.emit(true, length);
      } else {
        this.onLine({ bytes: chunk.subarray(start, nl), offset: base + start, lineNumber: ++this.lineNumber, terminated: true });
      }
      start = nl + 1;
    }
    if (start < chunk.length) {
      if (this.lineLength === 0) this.pendingOffset = base + start;
      // Copy: callers may reuse their read buffer for the next chunk.
      this.keep(chunk.subarray(start), true);
    }
  }

  /** Flushes a final unterminated line, if any. */
  end(): void {
    if (this.lineLength === 0) return;
    this.emit(false, this.lineLength);
  }

  /** Adds a piece of the pending line, keeping only the prefix once the line is over-long. */
  private keep(piece: Buffer, copy: boolean): void {
    this.lineLength += piece.length;
    const over = this.lineLength > this.maxLineBytes;
    if (!over) {
      this.add(piece, copy);
      return;
    }
    if (this.gathering) {
      // Now over-long: what was gathered becomes the kept prefix, a copy of its own.
      this.pending = [Buffer.from(this.gather!.subarray(0, this.pendingLength))];
      this.gathering = false;
    }
    const room = this.keepBytes - this.pendingLength;
    if (room > 0) {
      const part = piece.subarray(0, room);
      this.pending.push(copy ? Buffer.from(part) : part);
      this.pendingLength += part.length;
    }
    if (over && this.pendingLength > this.keepBytes) this.trimPending();
  }

  /** Adds a piece of a line that is not over-long: gathered in the reused buffer, or kept as a piece. */
  private add(piece: Buffer, copy: boolean): void {
    if (!this.reuse) {
      this.pending.push(copy ? Buffer.from(piece) : piece);
      this.pendingLength += piece.length;
      return;
    }
    const need = this.pendingLength + piece.length;
    if (this.gather === null || this.gather.length < need) {
      const grown = Buffer.allocUnsafe(Math.max(need, 2 * (this.gather?.length ?? 0), 64 * 1024));
      if (this.gathering) this.gather!.copy(grown, 0, 0, this.pendingLength);
      this.gather = grown;
    }
    piece.copy(this.gather, this.pendingLength);
    this.pendingLength = need;
    this.gathering = true;
  }

  private trimPending(): void {
    const joined = Buffer.concat(this.pending, this.pendingLength).subarray(0, this.keepBytes);
    this.pending = [joined];
    this.pendingLength = joined.length;
  }

  private emit(terminated: boolean, length: number): void {
    const tooLong = length > this.maxLineBytes;
    if (tooLong && this.pendingLength > this.keepBytes) this.trimPending();
    const bytes = this.gathering ? this.gather!.subarray(0, length) : Buffer.concat(this.pending, tooLong ? this.pendingLength : length);
    const line: ScannedLine = { bytes, offset: this.pendingOffset, lineNumber: ++this.lineNumber, terminated };
    if (tooLong) line.fullLength = length;
    this.pending = [];
    this.pendingLength = 0;
    this.lineLength = 0;
    this.gathering = false;
    this.onLine(line);
  }
}

/** True when two scanned lines are the same bytes, both ended by `\n` or both not. */
export function sameLine(a: ScannedLine, b: ScannedLine): boolean {
  return a.terminated === b.terminated && a.bytes.equals(b.bytes);
}

/**
 * The pull form of `LineSplitter` (it is one inside), for a reader that walks two streams in
 * step: `next()` hands out one line at a time, reading a chunk from `read` (which fills the buffer
 * it is given and returns how many bytes it put there, 0 at the end) only when no line is waiting.
 * Pure: the caller's `read` does the I/O.
 */
export class LinePuller {
  private waiting: ScannedLine[] = [];
  private taken = 0;
  private ended = false;
  private readonly splitter = new LineSplitter((line) => this.waiting.push(line));

  constructor(
    private readonly read: (into: Buffer) => number,
    private readonly chunkSize = 64 * 1024,
  ) {}

  /** The next line, or null once the stream has ended. */
  next(): ScannedLine | null {
    while (this.taken === this.waiting.length) {
      if (this.ended) return null;
      this.waiting = [];
      this.taken = 0;
      // A fresh chunk each time: lines the splitter hands out may share its memory.
      const chunk = Buffer.allocUnsafe(this.chunkSize);
      const n = this.read(chunk);
      if (n > 0) this.splitter.push(chunk.subarray(0, n));
      else {
        this.ended = true;
        this.splitter.end();
      }
    }
    return this.waiting[this.taken++]!;
  }
}
