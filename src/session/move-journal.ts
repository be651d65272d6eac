import { errnoCode } from "../errors.ts";
import { hashOpenFile, io } from "../io.ts";
import { openReadNoFollow, writeSmallFileNoFollow } from "./no-follow.ts";
import { artifactsDirOf } from "./paths.ts";

/**
 * What a move in progress left beside its source (`<stem>.move.json`). `size` and `sha256` name
 * the new file's exact bytes; they are recorded once the new file is complete, before it is renamed
 * into place, so a file at `to` that does not match them is not the moved session.
 */
export interface MoveJournal {
  to: string;
  temp: string;
  size?: number;
  sha256?: string;
}

/** What a move in progress left beside its destination (`<stem>.move-in.json`). */
export interface IncomingMove {
  from: string;
}

/** `<stem>.move.json` beside the session being moved. */
export function journalPathOf(sessionFile: string): string {
  return `${artifactsDirOf(sessionFile)}.move.json`;
}

/** `<stem>.move-in.json` beside the place a session is being moved to. */
export function incomingPathOf(sessionFile: string): string {
  return `${artifactsDirOf(sessionFile)}.move-in.json`;
}

export function writeMoveJournal(from: string, journal: MoveJournal): void {
  writeSmallFileNoFollow(journalPathOf(from), Buffer.from(JSON.stringify(journal)), "MOVE_FAILED");
}

export function writeIncomingMove(to: string, incoming: IncomingMove): void {
  writeSmallFileNoFollow(incomingPathOf(to), Buffer.from(JSON.stringify(incoming)), "MOVE_FAILED");
}

/** Reads a small JSON file without following a symlink; null when absent, a link or unreadable. */
function readJson(path: string): Record<string, unknown> | null {
  let fd: number;
  try {
    fd = openReadNoFollow(path);
  } catch {
    return null;
  }
  try {
    const chunks: Buffer[] = [];
    const buf = Buffer.allocUnsafe(4096);
    let total = 0;
    for (let n = io.readSync(fd, buf, 0, buf.length, null); n > 0; n = io.readSync(fd, buf, 0, buf.length, null)) {
      chunks.push(Buffer.from(buf.subarray(0, n)));
      total += n;
      if (total > 1 << 20) return null;
    }
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  } finally {
    io.closeSync(fd);
  }
}

/** Reads a move journal left beside `sessionFile`, or null. */
export function readMoveJournal(sessionFile: string): MoveJournal | null {
  const value = readJson(journalPathOf(sessionFile));
  if (value === null || typeof value.to !== "string" || typeof value.temp !== "string") return null;
  const journal: MoveJournal = { to: value.to, temp: value.temp };
  if (typeof value.size === "number" && typeof value.sha256 === "string") {
    journal.size = value.size;
    journal.sha256 = value.sha256;
  }
  return journal;
}

/** Reads the incoming-move note left beside `sessionFile`, or null. */
export function readIncomingMove(sessionFile: string): IncomingMove | null {
  const value = readJson(incomingPathOf(sessionFile));
  return value !== null && typeof value.from === "string" ? { from: value.from } : null;
}

function exists(path: string): boolean {
  try {
    io.lstatSync(path);
    return true;
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return false;
    throw err;
  }
}

/**
 * Whether the move `journal` describes had committed (its new file renamed into place). The old
 * file is removed only after the commit, so its absence beside a file at `to` is proof; otherwise
 * the file at `to` must be byte for byte the new file the journal recorded. A file that merely
 * exists at `to` (a session someone opened there meanwhile) proves nothing.
 */
export function moveCommitted(from: string, journal: MoveJournal): boolean {
  if (!exists(journal.to)) return false;
  if (!exists(from)) return true;
  if (journal.sha256 === undefined || journal.size === undefined) return false;
  return fileMatches(journal.to, journal.size, journal.sha256);
}

/** True when the file at `path` is exactly `size` bytes hashing to `sha256`. */
function fileMatches(path: string, size: number, sha256: string): boolean {
  let fd: number;
  try {
    fd = openReadNoFollow(path);
  } catch {
    return false;
  }
  try {
    return io.fstatSync(fd).size === size && hashOpenFile(fd) === sha256;
  } finally {
    io.closeSync(fd);
  }
}
