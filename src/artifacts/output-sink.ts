import { StringDecoder } from "node:string_decoder";
import { TranscriptStoreError } from "../errors.ts";
import type { ArtifactStore } from "./artifact-store.ts";
import type { ArtifactWriter } from "./artifact-writer.ts";
import { cutChars } from "./metadata.ts";

/** Bytes of output kept in memory (the tail window) before the rest spills. */
export const DEFAULT_SPILL_THRESHOLD = 51_200;

/** Options of `new OutputSink(options)`, validated once at construction. */
export interface OutputSinkOptions {
  /** Where the full stream is mirrored once it outgrows the window; without it output is only bounded. */
  artifacts?: ArtifactStore | null;
  /** Tool type of the mirror artifact. */
  toolType: string;
  /** Size of the in-memory tail window, in UTF-8 bytes. @default 51200 */
  spillThreshold?: number;
  /** Bytes of the stream's start also kept (head + omission marker + tail). @default 0 */
  headBytes?: number;
  /** Per-line cap (UTF-16 units) of the kept output; 0 = no cap. The mirror always gets full lines. @default 0 */
  maxColumns?: number;
  /** Live view of the stream: decoded text, never a split character, before the column cap. */
  onChunk?: (text: string) => void;
}

/** What `dump()` returns. */
export interface OutputSummary {
  /** The bounded output: everything when not truncated, else head + marker + tail (or just the tail). */
  output: string;
  /** True when the output does not hold the whole stream. */
  truncated: boolean;
  /** Bytes pushed. */
  totalBytes: number;
  /** Lines pushed (a final line without a line break counts). */
  totalLines: number;
  /** Id of the artifact holding the full stream, when it was mirrored and finished. */
  artifactId?: string;
}

const CONTINUATION_MASK = 0xc0;
const CONTINUATION = 0x80;
const NEWLINE = 0x0a;

function nonNegativeInteger(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
    throw new TranscriptStoreError("INVALID_OPTION", `${name} must be a non-negative integer, got: ${String(value)}`);
  return value;
}

/** The last `max` bytes of `buf`, starting on a character boundary (never inside a UTF-8 sequence). */
function utf8Tail(buf: Buffer, max: number): Buffer {
  if (buf.length <= max) return buf;
  let start = buf.length - max;
  while (start < buf.length && (buf[start]! & CONTINUATION_MASK) === CONTINUATION) start++;
  return buf.subarray(start);
}

/** How many leading bytes of `buf` fit in `max` without cutting a character. */
function utf8HeadLength(buf: Buffer, max: number): number {
  if (buf.length <= max) return buf.length;
  let end = max;
  while (end > 0 && (buf[end]! & CONTINUATION_MASK) === CONTINUATION) end--;
  return end;
}

/**
 * Streaming tool output (docs/artifacts.md, OutputSink): keeps a bounded tail in memory (plus an
 * optional head and a per-line column cap) and, as soon as the stream outgrows that window, mirrors
 * the whole stream from its first byte into an artifact, so what the model sees is small and what
 * happened is kept. Until mirroring starts the raw bytes are held (at most the window), which is
 * what lets the mirror begin at byte 0. If the artifact cannot be written the sink carries on with
 * the bounded output alone and reports no artifact.
 */
export class OutputSink {
  private readonly artifacts: ArtifactStore | null;
  private readonly toolType: string;
  private readonly tailWindow: number;
  private readonly headWindow: number;
  private readonly maxColumns: number;
  private readonly onChunk: ((text: string) => void) | undefined;
  private readonly decoder = new StringDecoder("utf8");

  private totalBytes = 0;
  private newlines = 0;
  private lastByte = -1;
  private truncated = false;
  private columnsDropped = false;

  private mirror: ArtifactWriter | null = null;
  private mirrorState: "pending" | "active" | "off" = "pending";
  private raw: Buffer[] = [];

  private head: Buffer[] = [];
  private headLength = 0;
  private headClosed: boolean;
  private tail: Buffer[] = [];
  private tailLength = 0;
  private keptTotal = 0;

  private column = 0;
  private lineCapped = false;
  private result: OutputSummary | null = null;

  constructor(options: OutputSinkOptions) {
    if (options === null || typeof options !== "object")
      throw new TranscriptStoreError("INVALID_OPTION", "OutputSink needs options with a toolType");
    this.artifacts = options.artifacts ?? null;
    this.toolType = options.toolType;
    this.tailWindow = nonNegativeInteger(options.spillThreshold, "spillThreshold", DEFAULT_SPILL_THRESHOLD);
    this.headWindow = nonNegativeInteger(options.headBytes, "headBytes", 0);
    this.maxColumns = nonNegativeInteger(options.maxColumns, "maxColumns", 0);
    if (options.onChunk !== undefined && typeof options.onChunk !== "function")
      throw new TranscriptStoreError("INVALID_OPTION", "onChunk must be a function");
    this.onChunk = options.onChunk;
    this.headClosed = this.headWindow === 0;
  }

  /** Adds a chunk (strings as UTF-8; byte chunks may split characters anywhere). */
  push(chunk: string | Uint8Array): void {
    if (this.result !== null) throw new TranscriptStoreError("INVALID_OPTION", "OutputSink already dumped");
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (bytes.length === 0) return;
    this.totalBytes += bytes.length;
    for (let i = bytes.indexOf(NEWLINE); i !== -1; i = bytes.indexOf(NEWLINE, i + 1)) this.newlines++;
    this.lastByte = bytes[bytes.length - 1]!;

    const text = this.decoder.write(bytes);
    this.keep(text);
    this.forward(bytes, typeof chunk === "string");
    if (text.length > 0) this.onChunk?.(text);
  }

  /** Finishes the stream: flushes, publishes the mirror artifact, returns the summary. Idempotent. */
  dump(): OutputSummary {
    if (this.result !== null) return this.result;
    const rest = this.decoder.end();
    if (rest.length > 0) {
      this.keep(rest);
      this.onChunk?.(rest);
    }
    let artifactId: string | undefined;
    if (this.mirrorState === "active" && this.mirror !== null) {
      try {
        artifactId = this.mirror.finish().id;
      } catch (err) {
        this.mirrorFailed(err);
      }
    }
    const head = Buffer.concat(this.head, this.headLength);
    const tail = utf8Tail(Buffer.concat(this.tail, this.tailLength), this.tailWindow);
    const omitted = this.keptTotal - head.length - tail.length;
    let output = head.toString("utf8");
    if (this.truncated && omitted > 0 && head.length > 0) output += `\n\n[... ${omitted} bytes omitted ...]\n\n`;
    output += tail.toString("utf8");
    this.result = {
      output,
      truncated: this.truncated,
      totalBytes: this.totalBytes,
      totalLines: this.newlines + (this.totalBytes > 0 && this.lastByte !== NEWLINE ? 1 : 0),
    };
    if (artifactId !== undefined) this.result.artifactId = artifactId;
    this.raw = [];
    this.tail = [];
    this.head = [];
    return this.result;
  }

  /** Applies the column cap and appends to the head, then the tail window. */
  private keep(text: string): void {
    if (text.length === 0) return;
    const kept = this.maxColumns > 0 ? this.capColumns(text) : text;
    let buf = Buffer.from(kept, "utf8");
    this.keptTotal += buf.length;
    if (!this.headClosed) {
      const take = utf8HeadLength(buf, this.headWindow - this.headLength);
      if (take > 0) {
        this.head.push(buf.subarray(0, take));
        this.headLength += take;
      }
      if (take < buf.length) this.headClosed = true;
      buf = buf.subarray(take);
    }
    if (buf.length === 0) return;
    this.tail.push(buf);
    this.tailLength += buf.length;
    // Compact only now and then, so memory stays within twice the window without copying on every push.
    if (this.tailLength > 2 * this.tailWindow + 65536) {
      const kept = Buffer.from(utf8Tail(Buffer.concat(this.tail, this.tailLength), this.tailWindow));
      this.tail = [kept];
      this.tailLength = kept.length;
    }
  }

  private capColumns(text: string): string {
    let out = "";
    let pos = 0;
    while (pos < text.length) {
      const nl = text.indexOf("\n", pos);
      const segment = text.slice(pos, nl === -1 ? text.length : nl);
      if (this.lineCapped) {
        if (segment.length > 0) this.columnsDropped = true;
      } else if (this.column + segment.length <= this.maxColumns) {
        out += segment;
        this.column += segment.length;
      } else {
        out += `${cutChars(segment, this.maxColumns - this.column)}…`;
        this.lineCapped = true;
        this.columnsDropped = true;
      }
      if (nl === -1) break;
      out += "\n";
      this.column = 0;
      this.lineCapped = false;
      pos = nl + 1;
    }
    return out;
  }

  /** Routes raw bytes to the mirror, or holds them until the stream is known to outgrow the window. */
  private forward(bytes: Buffer, fresh: boolean): void {
    if (!this.truncated && (this.totalBytes > this.headWindow + this.tailWindow || this.columnsDropped)) this.truncated = true;
    if (this.mirrorState === "active") {
      this.writeMirror(bytes);
      return;
    }
    if (this.mirrorState === "off") return;
    // The caller may reuse its buffer after push returns: hold a copy.
    this.raw.push(fresh ? bytes : Buffer.from(bytes));
    if (!this.truncated) return;
    const held = this.raw;
    this.raw = [];
    if (this.artifacts === null) {
      this.mirrorState = "off";
      return;
    }
    try {
      this.mirror = this.artifacts.createWriter(this.toolType);
    } catch (err) {
      this.mirrorFailed(err);
      return;
    }
    this.mirrorState = "active";
    for (const b of held) if (!this.writeMirror(b)) return;
  }

  private writeMirror(bytes: Buffer): boolean {
    try {
      this.mirror!.write(bytes);
      return true;
    } catch (err) {
      this.mirrorFailed(err);
      return false;
    }
  }

  private mirrorFailed(err: unknown): void {
    this.mirror?.abort();
    this.mirror = null;
    this.mirrorState = "off";
    this.raw = [];
    this.artifacts?.warn({
      code: "PERSISTENCE_FAILED",
      message: `Tool output not mirrored to an artifact; keeping bounded output only: ${(err as Error).message}`,
      path: this.artifacts.dir,
    });
  }
}
