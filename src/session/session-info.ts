import { basename } from "node:path";
import { decodeLine, stripBom } from "../format/decode-line.ts";
import { isRecord, type SessionHeader } from "../format/types.ts";
import { io } from "../io.ts";
import { entryTime, readLineAt, scanBody, sessionName } from "./session-body-scan.ts";

/** What a listing knows about a session: its head parsed, its body scanned for marks (no line parsed). */
export interface SessionInfo {
  path: string;
  id: string;
  cwd: string;
  title: string | null;
  /** The header's creation time. */
  created: Date;
  /**
   * When the session was last active: its last message's time (as pi lists it), else the header's
   * time, else the file's modification time (a file copied or migrated keeps its recency).
   */
  modified: Date;
  size: number;
  /** Message entries in the file (lines holding `"type":"message"`), counted exactly. */
  messageCount: number;
  /** Always true for a listing of this version (kept for readers of older records). */
  messageCountExact: boolean;
  /** The first user message's text (first 200 characters), when it was within the head window. */
  firstMessage: string | null;
  parentSession: string | null;
  /** The file ends in an unterminated line (a crash); it still lists. */
  tornTail: boolean;
  /** Pinned (`pin`): prune never removes it. Present only when true. */
  pinned?: boolean;
  /** Archived (`archive`): listed only when asked for. Present only when true. */
  archived?: boolean;
}

/** Bytes of a file's head read to find its header and first message (the body is scanned on). @default 4096 */
export const INFO_WINDOW = 4096;
const MAX_HEAD = 65536;
/** Longest header line (with an omp title slot before it) a listing reads; past it the file lists as no session. */
const MAX_HEADER_BYTES = 64 * 1024 * 1024;

/** The text of a message: its string content, or its first text block. */
export function messageText(message: unknown): string | null {
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
 * built in one pass that stops once 200 units are out (a long first message costs no more). Runs
 * of words joined by single spaces are copied as one slice; only other whitespace ends a slice.
 */
export function preview(text: string): string {
  const end = Math.min(text.length, 400);
  let out = "";
  let length = 0; // units of the result so far, the open slice included
  let start = -1; // where the open slice began, or -1 between slices
  let i = 0;
  for (; i < end && length < 200; i++) {
    const c = text.charCodeAt(i);
    if (!isWhitespace(c)) {
      if (start === -1) {
        if (length > 0) {
          out += " ";
          if (++length === 200) break;
        }
        start = i;
      }
      length++;
    } else if (start !== -1) {
      // A single space before a word stays inside the slice; any other whitespace closes it.
      if (c === 0x20 && i + 1 < end && !isWhitespace(text.charCodeAt(i + 1))) length++;
      else {
        out += text.slice(start, i);
        start = -1;
      }
    }
  }
  return start === -1 ? out : out + text.slice(start, i);
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

const MESSAGE_MARK = Buffer.from('"type":"message"');
const TITLE_MARK = Buffer.from('"type":"title"');
const USER_MARK = Buffer.from('"role":"user"');

/** Reused by every read: a listing reads thousands of heads (and tails) one after another. */
const scratch = Buffer.allocUnsafe(2 * INFO_WINDOW);

function readInto(fd: number, buf: Buffer, length: number, position: number): Buffer {
  return buf.subarray(0, io.readSync(fd, buf, 0, length, position));
}

/** True when the window holds the whole header line (after an omp title slot, if any). */
function holdsHeaderLine(head: Buffer): boolean {
  const first = head.indexOf(0x0a);
  if (first === -1) return false;
  return !head.subarray(0, 40).includes(TITLE_MARK) || head.indexOf(0x0a, first + 1) !== -1;
}

/** The text of a line's user message, or null when it is no record with a user message holding text. */
function userText(line: Buffer): string | null {
  const decoded = decodeLine(line);
  if (decoded.kind !== "record" || !isRecord(decoded.value.message) || decoded.value.message.role !== "user") return null;
  return messageText(decoded.value.message);
}

/**
 * The preview of the first user message among the lines of `head` from `from` on (complete lines,
 * plus an unterminated last one when `partial`): only lines holding both marks are parsed.
 */
function firstUserMessage(head: Buffer, from: number, partial: boolean): string | null {
  for (let user = head.indexOf(USER_MARK, from); user !== -1; ) {
    const start = head.lastIndexOf(0x0a, user) + 1;
    let end = head.indexOf(0x0a, user);
    if (end === -1) {
      if (!partial) return null;
      end = head.length;
    }
    const line = head.subarray(start, end);
    const text = line.indexOf(MESSAGE_MARK) === -1 ? null : userText(line);
    if (text !== null) return preview(text);
    user = head.indexOf(USER_MARK, end + 1);
  }
  return null;
}

/** What `stat` gives a listing: size, modification and birth times. */
export interface InfoStat {
  size: number;
  mtime: Date;
  mtimeMs: number;
  birthtime: Date;
  /** Device and inode (a full `Stats` has them): what an index checks a cached listing by. */
  dev?: number;
  ino?: number;
}

/**
 * Reads a session's head (and scans its body) and returns its listing info, or null
 * when the file has no valid header (such files are skipped by listings, never rewritten).
 */
export function readSessionInfo(path: string, knownStat?: InfoStat): SessionInfo | null {
  return readSessionListing(path, knownStat)?.info ?? null;
}

/**
 * `readSessionInfo` and the stat it was read under (taken on the open descriptor before any read,
 * so a write racing the read shows in a later stat); null when the file cannot be opened.
 */
export function readSessionListing(path: string, knownStat?: InfoStat): { info: SessionInfo | null; stat: InfoStat } | null {
  let fd: number;
  try {
    fd = io.openSync(path, "r");
  } catch {
    return null;
  }
  let stat: InfoStat | undefined = knownStat;
  try {
    stat ??= io.fstatSync(fd);
    return { info: infoFrom(fd, path, stat), stat };
  } catch {
    return stat === undefined ? null : { info: null, stat };
  } finally {
    io.closeSync(fd);
  }
}

function infoFrom(fd: number, path: string, stat: InfoStat): SessionInfo | null {
  const size = stat.size;
  // A small file is read whole, in one call; a larger one is read on by `scanBody`.
  let head = readInto(fd, scratch, size <= 2 * INFO_WINDOW ? size : INFO_WINDOW, 0);
  // An omp title slot or a long header (a long cwd) can push the header past the first window:
  // read on, doubling, until the header line ends (a file is no session only when it never does).
  for (let length = MAX_HEAD; !holdsHeaderLine(head) && size > head.length && head.length < MAX_HEADER_BYTES; length *= 2) {
    const take = Math.min(size, length, MAX_HEADER_BYTES);
    head = readInto(fd, Buffer.allocUnsafe(take), take, 0);
  }
  const whole = head.length >= size;
  const partial = whole && head.length > 0 && head[head.length - 1] !== 0x0a;
  let header: SessionHeader | null = null;
  let title: string | null = null;
  let index = 0;
  let start = 0;
  for (; header === null; index++) {
    if (start >= head.length) return null;
    let end = head.indexOf(0x0a, start);
    if (end === -1) {
      if (!partial) return null;
      end = head.length;
    }
    const line = head.subarray(start, end);
    start = end + 1;
    const decoded = decodeLine(index === 0 ? stripBom(line) : line);
    if (decoded.kind === "blank") continue;
    if (decoded.kind !== "record") return null;
    if (decoded.value.type === "title" && index === 0) {
      if (typeof decoded.value.title === "string") title = decoded.value.title.trimEnd() || null;
      continue;
    }
    if (decoded.value.type !== "session" || typeof decoded.value.id !== "string") return null;
    header = decoded.value as SessionHeader;
  }
  const firstMessage = firstUserMessage(head, start, partial);
  const body = scanBody(fd, head, start, size);
  const headerTitle = typeof header.title === "string" ? header.title : title;
  const created = typeof header.timestamp === "string" && header.timestamp ? new Date(header.timestamp) : null;
  const lastMessage = body.lastMessage === -1 ? null : entryTime(readLineAt(fd, head, body.lastMessage, size));
  // A fork is active from when it was made (its copied messages are older): the later of the two.
  const made = created !== null && !Number.isNaN(created.getTime()) ? created : null;
  const modified = lastMessage === null ? (made ?? stat.mtime) : made !== null && made > lastMessage ? made : lastMessage;
  return {
    path,
    id: header.id,
    cwd: typeof header.cwd === "string" ? header.cwd : "",
    title: (body.sessionInfo === -1 ? null : sessionName(readLineAt(fd, head, body.sessionInfo, size))) ?? headerTitle,
    created: created ?? stat.birthtime,
    modified,
    size,
    messageCount: body.messages,
    messageCountExact: true,
    firstMessage,
    parentSession: typeof header.parentSession === "string" ? header.parentSession : null,
    tornTail: body.tornTail,
  };
}

/** The file name, for prefix matching. */
export function fileNameOf(info: SessionInfo): string {
  return basename(info.path);
}
