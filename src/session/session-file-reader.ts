/**
 * The reader of session files: everything that reads a session file's bytes goes through here.
 * - `scanSessionFile`: streams the whole file through the line scanner and parser;
 * - `headerEndOffset` / `readSessionHeader`: find and parse the header from the file's head only;
 * - `copyFileFrom`: streams the bytes from an offset to the end (a move copies the body so).
 * Writing is `session-file.ts`'s job (see its header).
 */
import { constants as bufferConstants } from "node:buffer";
import { constants } from "node:fs";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { LineSplitter, type ScannedLine } from "../format/line-splitter.ts";
import type { MalformedLine } from "../format/load-report.ts";
import { parseSessionBytes, SessionParser } from "../format/session-parser.ts";
import type { ParsedSession, SessionParserOptions } from "../format/session-parser.ts";
import type { SessionHeader } from "../format/types.ts";
import { io } from "../io.ts";

/** Bytes read per chunk when scanning a session. @default 1 MiB */
export const DEFAULT_CHUNK_SIZE = 1 << 20;

/**
 * Lines longer than `maxLineBytes` are never made into one string (V8 cannot hold one past its
 * string limit, ~512 MiB): they are reported as "line too large" problems and left on disk, and
 * only their first `keepBytes` are held. Internal; tests lower the limit.
 */
export const scanLimits = { maxLineBytes: bufferConstants.MAX_STRING_LENGTH, keepBytes: 64 * 1024 };

/** What the parser is shown in place of a too-large line: one byte that is never valid JSON. */
const STAND_IN = Buffer.from([0x01]);

/**
 * Streams a session file through the chunked line scanner. Never holds the file as one string,
 * nor a line longer than `scanLimits.maxLineBytes`. Returns null when the file does not exist.
 */
/** Which file (not which name) was read: a file renamed over the path is another one. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

/** A scanned session and the identity of the file the scan read. */
export type ScannedSession = ParsedSession & { identity: FileIdentity | null };

export function scanSessionFile(
  path: string,
  parserOptions: SessionParserOptions = {},
  chunkSize = DEFAULT_CHUNK_SIZE,
): ScannedSession | null {
  let fd: number;
  try {
    fd = io.openSync(path, "r");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot read session ${path}: ${(err as Error).message}`, { path, cause: err });
  }
  const parser = new SessionParser(parserOptions);
  const tooLarge = new Map<number, ScannedLine>();
  const onLine = (line: ScannedLine) => {
    if (line.fullLength === undefined) return parser.line(line);
    // The parser sees a one-byte malformed line at the same place (so a too-large first line is a
    // bad header, and line numbers hold); its report is corrected afterwards.
    tooLarge.set(line.offset, line);
    parser.line({ ...line, bytes: STAND_IN });
  };
  // Every line the parser keeps (a malformed one, a torn tail) it copies: the gathering buffer can be reused.
  const splitter = new LineSplitter(onLine, { ...scanLimits, reuseBuffer: true });
  const buffer = Buffer.allocUnsafe(chunkSize);
  let identity: FileIdentity | null = null;
  try {
    for (;;) {
      const n = io.readSync(fd, buffer, 0, chunkSize, null);
      if (n === 0) break;
      splitter.push(buffer.subarray(0, n));
    }
    splitter.end();
    const stat = io.fstatSync(fd);
    identity = { dev: stat.dev, ino: stat.ino };
  } finally {
    io.closeSync(fd);
  }
  const parsed = parser.finish();
  if (tooLarge.size > 0) correctTooLarge(parsed, tooLarge, path);
  return Object.assign(parsed, { identity });
}

/** Puts the real place, length and reason of each too-large line into the parser's report. */
function correctTooLarge(parsed: ParsedSession, lines: Map<number, ScannedLine>, source: string): void {
  const problem = (line: ScannedLine): MalformedLine => ({
    line: line.lineNumber,
    offset: line.offset,
    reason: `line too large (${line.fullLength} bytes)`,
    bytes: Buffer.from(line.bytes),
    length: line.fullLength,
    source,
  });
  parsed.malformed = parsed.malformed.map((m) => {
    const line = lines.get(m.offset);
    return line === undefined ? m : problem(line);
  });
  for (const line of lines.values()) {
    const standInEnd = line.offset + STAND_IN.length + (line.terminated ? 1 : 0);
    const end = line.offset + line.fullLength! + (line.terminated ? 1 : 0);
    if (parsed.bytesRead === standInEnd) parsed.bytesRead = end;
    if (parsed.completeLength === standInEnd) parsed.completeLength = end;
    if (parsed.header === null && line.lineNumber <= 2 && parsed.headerProblem?.startsWith("header:")) {
      parsed.headerProblem = "header: line too large";
    }
    if (parsed.tornTail?.offset === line.offset) {
      // A too-large final line without its newline is kept where it is (it cannot be quarantined
      // as a value): it gets its newline like any final line, and is reported.
      parsed.tornTail = null;
      parsed.missingFinalNewline = true;
      parsed.completeLength = end;
      if (parsed.header !== null) parsed.malformed.push(problem(line));
    }
  }
}
const HEADER_TYPE = /"type"\s*:\s*"session"/;

/**
 * Byte offset just past the header line (and an omp title line before it), found by reading the
 * head of the file in chunks, however long the header line is. Returns null when neither of the
 * first two non-blank lines is a header.
 */
export function headerEndOffset(path: string | number, chunkSize = 1 << 16): number | null {
  const fd = typeof path === "number" ? path : io.openSync(path, "r");
  try {
    // undefined while still looking; the offset past the header line, or null for no header
    const seen: { end: number | null | undefined } = { end: undefined };
    let nonBlank = 0;
    const splitter = new LineSplitter((line) => {
      if (seen.end !== undefined) return;
      const text = line.bytes.toString("utf8");
      if (HEADER_TYPE.test(text)) seen.end = line.offset + line.bytes.length + 1;
      else if (text.replace(/\0/g, "").trim().length > 0 && ++nonBlank >= 2) seen.end = null;
    });
    const chunk = Buffer.allocUnsafe(chunkSize);
    let position = 0;
    while (seen.end === undefined) {
      const n = io.readSync(fd, chunk, 0, chunkSize, position);
      if (n === 0) return null; // an unterminated last line is no header line yet
      splitter.push(chunk.subarray(0, n));
      position += n;
    }
    return seen.end;
  } finally {
    if (typeof path !== "number") io.closeSync(fd);
  }
}

/** Streams the bytes of `path` (a name or an open descriptor) from `offset` to its end (or to `end`) through `emit`. */
export function copyFileFrom(
  path: string | number,
  offset: number,
  emit: (data: Buffer) => void,
  chunkSize = DEFAULT_CHUNK_SIZE,
  end = Number.POSITIVE_INFINITY,
): void {
  const fd = typeof path === "number" ? path : io.openSync(path, "r");
  const buffer = Buffer.allocUnsafe(chunkSize);
  try {
    let position = offset;
    for (;;) {
      const n = io.readSync(fd, buffer, 0, Math.min(chunkSize, end - position), position);
      if (n === 0) break;
      emit(buffer.subarray(0, n));
      position += n;
    }
  } finally {
    if (typeof path !== "number") io.closeSync(fd);
  }
}

/** The header (BOM and omp title slot handled), read from the head of the file only. */
export function readSessionHeader(path: string): SessionHeader | null {
  const end = headerEndOffset(path);
  if (end === null) return null;
  const fd = io.openSync(path, "r");
  try {
    const head = Buffer.allocUnsafe(end);
    const n = io.readSync(fd, head, 0, end, 0);
    return parseSessionBytes(head.subarray(0, n)).header;
  } finally {
    io.closeSync(fd);
  }
}

/**
 * Opens `path` for reading only when it is still the file `identity` names (not one renamed over
 * it) and holds at least `length` bytes; null otherwise. The caller closes the descriptor.
 */
export function openSameFile(path: string, identity: FileIdentity, length: number): number | null {
  let fd: number;
  try {
    fd = io.openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const stat = io.fstatSync(fd);
    if (stat.dev === identity.dev && stat.ino === identity.ino && stat.size >= length) return fd;
  } catch {
    // unreadable: not the file that was scanned, as far as anyone can tell
  }
  io.closeSync(fd);
  return null;
}
