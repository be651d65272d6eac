import { basename } from "node:path";
import { decodeLine, stripBom } from "../format/decode-line.ts";
import { isRecord, type SessionHeader } from "../format/types.ts";
import { io } from "../io.ts";

/** What a listing knows about a session, read from its head and tail only. */
export interface SessionInfo {
  path: string;
  id: string;
  cwd: string;
  title: string | null;
  /** The header's creation time. */
  created: Date;
  /** The file's modification time. */
  modified: Date;
  size: number;
  /** Messages in the file: exact when the whole file fit in the sampled windows, else an estimate. */
  messageCount: number;
  messageCountExact: boolean;
  /** The first user message's text (first 200 characters), when it was within the head window. */
  firstMessage: string | null;
  parentSession: string | null;
  /** The file ends in an unterminated line (a crash); it still lists. */
  tornTail: boolean;
}

/** Bytes read from each end of a file when listing. @default 4096 */
export const INFO_WINDOW = 4096;
const MAX_HEAD = 65536;

function messageText(message: unknown): string | null {
  if (!isRecord(message)) return null;
  const content = message.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    for (const block of content) if (isRecord(block) && block.type === "text" && typeof block.text === "string") return block.text;
  }
  return null;
}

/**
 * The first 400 units of `text` with whitespace runs collapsed to one space, trimmed, cut to 200:
 * built in one pass that stops once 200 units are out (a long first message costs no more).
 */
export function preview(text: string): string {
  let out = "";
  let space = false;
  const end = Math.min(text.length, 400);
  for (let i = 0; i < end && out.length < 200; i++) {
    const c = text.charCodeAt(i);
    if (isWhitespace(c)) {
      space = out.length > 0;
      continue;
    }
    let run = i + 1;
    while (run < end && !isWhitespace(text.charCodeAt(run))) run++;
    out += space ? ` ${text.slice(i, run)}` : text.slice(i, run);
    space = false;
    i = run - 1;
  }
  return out.length > 200 ? out.slice(0, 200) : out;
}

/** What `\s` (and `trim`) count as whitespace, by UTF-16 code unit. */
function isWhitespace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Complete lines of a window; `skipFirst` drops a partial first line (tail windows). */
function windowLines(buf: Buffer, skipFirst: boolean): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  if (skipFirst) {
    const nl = buf.indexOf(0x0a);
    if (nl === -1) return lines;
    start = nl + 1;
  }
  for (let nl = buf.indexOf(0x0a, start); nl !== -1; nl = buf.indexOf(0x0a, start)) {
    lines.push(buf.subarray(start, nl));
    start = nl + 1;
  }
  return lines;
}

const MESSAGE_MARK = Buffer.from('"type":"message"');
const TITLE_MARK = Buffer.from('"type":"title"');
const USER_MARK = Buffer.from('"role":"user"');

function readAt(fd: number, length: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  return buf.subarray(0, io.readSync(fd, buf, 0, length, 0));
}

/** True when the window holds the whole header line (after an omp title slot, if any). */
function holdsHeaderLine(head: Buffer): boolean {
  const first = head.indexOf(0x0a);
  if (first === -1) return false;
  return !head.subarray(0, 40).includes(TITLE_MARK) || head.indexOf(0x0a, first + 1) !== -1;
}

/**
 * Reads a session's head (and, for larger files, its tail) and returns its listing info, or null
 * when the file has no valid header (such files are skipped by listings, never rewritten).
 */
export function readSessionInfo(path: string, knownStat?: { size: number; mtime: Date; birthtime: Date }): SessionInfo | null {
  let fd: number;
  try {
    fd = io.openSync(path, "r");
  } catch {
    return null;
  }
  try {
    const stat = knownStat ?? io.fstatSync(fd);
    const size = stat.size;
    // A file that fits in both windows is read whole, in one call, and counted exactly.
    let head = readAt(fd, size <= 2 * INFO_WINDOW ? size : INFO_WINDOW);
    // An omp title slot or a long header can push the header past the first window.
    if (!holdsHeaderLine(head) && size > head.length) head = readAt(fd, Math.min(size, MAX_HEAD));
    const whole = head.length >= size;
    const lines = windowLines(head, false);
    if (whole && head.length > 0 && head[head.length - 1] !== 0x0a) {
      const lastStart = head.lastIndexOf(0x0a) + 1;
      lines.push(head.subarray(lastStart));
    }
    let header: SessionHeader | null = null;
    let title: string | null = null;
    let firstMessage: string | null = null;
    let messages = 0;
    let index = 0;
    for (; index < lines.length && header === null; index++) {
      const decoded = decodeLine(index === 0 ? stripBom(lines[index]!) : lines[index]!);
      if (decoded.kind === "blank") continue;
      if (decoded.kind !== "record") return null;
      if (decoded.value.type === "title" && index === 0) {
        if (typeof decoded.value.title === "string") title = decoded.value.title.trimEnd() || null;
        continue;
      }
      if (decoded.value.type !== "session" || typeof decoded.value.id !== "string") return null;
      header = decoded.value as SessionHeader;
    }
    if (header === null) return null;
    for (; index < lines.length; index++) {
      const line = lines[index]!;
      if (line.indexOf(MESSAGE_MARK) === -1) continue;
      messages++;
      if (firstMessage !== null || line.indexOf(USER_MARK) === -1) continue;
      const decoded = decodeLine(line);
      if (decoded.kind === "record" && isRecord(decoded.value.message) && decoded.value.message.role === "user") {
        const text = messageText(decoded.value.message);
        if (text !== null) firstMessage = preview(text);
      }
    }
    let tornTail = whole ? head.length > 0 && head[head.length - 1] !== 0x0a : false;
    let messageCount = messages;
    if (!whole) {
      const tailLen = Math.min(INFO_WINDOW, size - head.length);
      const tail = Buffer.allocUnsafe(tailLen);
      const n = io.readSync(fd, tail, 0, tailLen, size - tailLen);
      const t = tail.subarray(0, n);
      tornTail = t.length > 0 && t[t.length - 1] !== 0x0a;
      const tailLines = windowLines(t, true);
      const tailMessages = tailLines.filter((l) => l.indexOf(MESSAGE_MARK) !== -1).length;
      const sampledLines = Math.max(1, lines.length - 1 + tailLines.length);
      const sampledBytes = head.length + t.length;
      const density = (messages + tailMessages) / sampledLines;
      const estimatedLines = (size / sampledBytes) * sampledLines;
      messageCount = Math.max(messages + tailMessages, Math.round(estimatedLines * density));
    }
    return {
      path,
      id: header.id,
      cwd: typeof header.cwd === "string" ? header.cwd : "",
      title: typeof header.title === "string" ? header.title : title,
      created: new Date(typeof header.timestamp === "string" && header.timestamp ? header.timestamp : stat.birthtime),
      modified: stat.mtime,
      size,
      messageCount,
      messageCountExact: whole,
      firstMessage,
      parentSession: typeof header.parentSession === "string" ? header.parentSession : null,
      tornTail,
    };
  } catch {
    return null;
  } finally {
    io.closeSync(fd);
  }
}

/** The file name, for prefix matching. */
export function fileNameOf(info: SessionInfo): string {
  return basename(info.path);
}
