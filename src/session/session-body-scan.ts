import { decodeLine } from "../format/decode-line.ts";
import { io } from "../io.ts";

const MESSAGE_MARK = Buffer.from('"type":"message"');
const INFO_MARK = Buffer.from('"type":"session_info"');
/** Bytes of the open line kept before the next chunk, so a mark cut by a chunk boundary is still found. */
const CARRY = Math.max(MESSAGE_MARK.length, INFO_MARK.length) - 1;
const CHUNK = 1024 * 1024;
/** Bytes of a line read to date a session or name it; a longer line is dated by its first `"timestamp"`. */
const LINE_PEEK = 64 * 1024;

/** What one pass over a session's body bytes finds, without parsing a line. */
export interface BodyScan {
  /** Lines holding the message mark (`"type":"message"`): the entries a loader counts as messages. */
  messages: number;
  /** Where the last of them starts, or -1. */
  lastMessage: number;
  /** Where the last `session_info` line (pi's session name) starts, or -1. */
  sessionInfo: number;
  /** The file ends in an unterminated line. */
  tornTail: boolean;
}

/** Reused by every scan: a listing scans thousands of bodies one after another. */
let chunk: Buffer | undefined;

/**
 * Scans the body of a session, `head[from..]` and then the rest of the file up to `size` in 1 MiB
 * reads: per line, one cursor per mark (`indexOf`, no line copied or parsed). The counts are exact
 * for every file, whatever its size; the cost is a read of the file (see docs/benchmarks.md).
 */
export function scanBody(fd: number, head: Buffer, from: number, size: number): BodyScan {
  const out: BodyScan = { messages: 0, lastMessage: -1, sessionInfo: -1, tornTail: false };
  let lineStart = from; // where the open line starts, in the file
  let isMessage = false;
  let isInfo = false;
  let buf = head;
  let base = 0; // file offset of buf[0]
  let pos = from; // first byte of buf not yet searched for a newline
  for (;;) {
    const lineLocal = () => Math.max(0, lineStart - base);
    let message = buf.indexOf(MESSAGE_MARK, lineLocal());
    let info = buf.indexOf(INFO_MARK, lineLocal());
    for (;;) {
      const nl = buf.indexOf(0x0a, pos);
      const end = nl === -1 ? buf.length : nl;
      const local = lineLocal();
      if (message !== -1 && message < local) message = buf.indexOf(MESSAGE_MARK, local);
      if (message !== -1 && message < end) isMessage = true;
      if (info !== -1 && info < local) info = buf.indexOf(INFO_MARK, local);
      if (info !== -1 && info < end) isInfo = true;
      if (nl === -1) break;
      if (isMessage) {
        out.messages++;
        out.lastMessage = lineStart;
      }
      if (isInfo) out.sessionInfo = lineStart;
      isMessage = isInfo = false;
      lineStart = base + nl + 1;
      pos = nl + 1;
    }
    const done = base + buf.length;
    if (done >= size) break;
    // Carry the open line's last bytes (never those of a closed line) in front of the next read.
    const keep = Math.min(CARRY, done - lineStart);
    chunk ??= Buffer.allocUnsafe(CHUNK + CARRY);
    if (buf === chunk) chunk.copyWithin(0, buf.length - keep, buf.length);
    else buf.copy(chunk, 0, buf.length - keep);
    const read = io.readSync(fd, chunk, keep, Math.min(CHUNK, size - done), done);
    if (read === 0) break; // the file shrank under the read: what was seen is the answer
    buf = chunk.subarray(0, keep + read);
    base = done - keep;
    pos = keep;
  }
  const end = base + buf.length;
  if (lineStart < end) {
    // An unterminated last line (a crash) still lists, as the loader keeps what it can.
    out.tornTail = true;
    if (isMessage) {
      out.messages++;
      out.lastMessage = lineStart;
    }
    if (isInfo) out.sessionInfo = lineStart;
  }
  return out;
}

/**
 * The line starting at `offset` (its first `LINE_PEEK` bytes), and whether it ended there: cut
 * from `head` (the file's first bytes) when it ends there, else read.
 */
export function readLineAt(fd: number, head: Buffer, offset: number, size: number): { bytes: Buffer; complete: boolean } {
  if (offset < head.length) {
    const nl = head.indexOf(0x0a, offset);
    if (nl !== -1) return { bytes: head.subarray(offset, nl), complete: true };
    if (head.length >= size) return { bytes: head.subarray(offset), complete: true };
  }
  const take = Math.min(LINE_PEEK, size - offset);
  const buf = Buffer.allocUnsafe(take);
  const got = buf.subarray(0, io.readSync(fd, buf, 0, take, offset));
  const nl = got.indexOf(0x0a);
  if (nl !== -1) return { bytes: got.subarray(0, nl), complete: true };
  return { bytes: got, complete: offset + got.length >= size };
}

const TIME_KEY = Buffer.from('"timestamp":"');
/** Longest time string taken: a longer run is no time. */
const MAX_TIME_CHARS = 64;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * When a message line was written: its entry's `timestamp`, the line's first string
 * `"timestamp"` (pi writes it before the message) of 1 to 64 bytes holding neither a quote nor a
 * backslash, found in the line's bytes (its first 64 KiB; nothing decoded but those bytes, no
 * parse). Null when there is none or it is no valid time.
 */
export function entryTime(line: { bytes: Buffer }): Date | null {
  const bytes = line.bytes;
  for (let key = bytes.indexOf(TIME_KEY); key !== -1; key = bytes.indexOf(TIME_KEY, key + 1)) {
    const start = key + TIME_KEY.length;
    const limit = Math.min(bytes.length, start + MAX_TIME_CHARS + 1);
    let end = start;
    while (end < limit && bytes[end] !== QUOTE && bytes[end] !== BACKSLASH) end++;
    if (end === start || end - start > MAX_TIME_CHARS || end === bytes.length || bytes[end] !== QUOTE) continue;
    const date = new Date(bytes.toString("latin1", start, end));
    return Number.isNaN(date.getTime()) || date.getTime() <= 0 ? null : date;
  }
  return null;
}

/** pi's session name from a `session_info` line (trimmed; empty is a clear), or null. */
export function sessionName(line: { bytes: Buffer; complete: boolean }): string | null {
  if (!line.complete) return null;
  const decoded = decodeLine(line.bytes);
  if (decoded.kind !== "record" || decoded.value.type !== "session_info" || typeof decoded.value.name !== "string") return null;
  return decoded.value.name.trim() || null;
}
