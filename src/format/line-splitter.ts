/** One line cut out of a byte stream, without its `\n`. */
export interface ScannedLine {
  /** The line's bytes (no trailing LF). May share memory with the pushed chunk. */
  bytes: Buffer;
  /** Byte offset of the line's first byte in the stream. */
  offset: number;
  /** 1-based line number. */
  lineNumber: number;
  /** False only for a final line that the stream ended without a `\n`. */
  terminated: boolean;
}

const LF = 0x0a;

/**
 * A push-based byte line splitter: feed it chunks of any size, it emits whole lines. Lines are cut
 * at the byte 0x0A only, so a multi-byte UTF-8 character split across two chunks is reassembled
 * untouched, and a line longer than any chunk is gathered from its pieces. Pure: no I/O.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingLength = 0;
  private pendingOffset = 0;
  private position = 0;
  private lineNumber = 0;

  constructor(private readonly onLine: (line: ScannedLine) => void) {}

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
      let bytes: Buffer;
      let offset: number;
      if (this.pendingLength > 0) {
        this.pending.push(chunk.subarray(start, nl));
        bytes = Buffer.concat(this.pending, this.pendingLength + (nl - start));
        offset = this.pendingOffset;
        this.pending = [];
        this.pendingLength = 0;
      } else {
        bytes = chunk.subarray(start, nl);
        offset = base + start;
      }
      this.onLine({ bytes, offset, lineNumber: ++this.lineNumber, terminated: true });
      start = nl + 1;
    }
    if (start < chunk.length) {
      if (this.pendingLength === 0) this.pendingOffset = base + start;
      // Copy: callers may reuse their read buffer for the next chunk.
      const rest = Buffer.from(chunk.subarray(start));
      this.pending.push(rest);
      this.pendingLength += rest.length;
    }
  }

  /** Flushes a final unterminated line, if any. */
  end(): void {
    if (this.pendingLength === 0) return;
    const bytes = Buffer.concat(this.pending, this.pendingLength);
    this.pending = [];
    this.pendingLength = 0;
    this.onLine({ bytes, offset: this.pendingOffset, lineNumber: ++this.lineNumber, terminated: false });
  }
}
