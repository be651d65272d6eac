import type { SessionInfo } from "../session/session-info.ts";
import type { SqliteDatabase, SqliteStatement } from "./sqlite.ts";

/**
 * The listing facts of each session file, cached with the stat they were read under (git's index
 * keeps stat data the same way): a row serves a listing only while the file's device, inode, size
 * and modification time are unchanged. Pins and archive state are no listing facts: they come from
 * the store's lifecycle files, applied after. `listed = 0`: the file has no session header.
 */
export const LISTING_SCHEMA = `
CREATE TABLE IF NOT EXISTS session_listing (
  path TEXT PRIMARY KEY,
  dev INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  size INTEGER NOT NULL,
  mtime_ms REAL NOT NULL,
  listed INTEGER NOT NULL,
  session_id TEXT,
  cwd TEXT,
  title TEXT,
  created_ms REAL,
  modified_ms REAL,
  message_count INTEGER,
  first_message TEXT,
  parent_session TEXT,
  torn_tail INTEGER
) STRICT, WITHOUT ROWID;
-- du's per-session accounting (src/index/accounting-cache.ts), keyed the same way.
CREATE TABLE IF NOT EXISTS session_accounting (
  path TEXT PRIMARY KEY,
  dev INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  size INTEGER NOT NULL,
  mtime_ms REAL NOT NULL,
  account TEXT NOT NULL
) STRICT, WITHOUT ROWID;
`;

/** The tables `LISTING_SCHEMA` creates (dropped with the index's own when its schema changes). */
export const LISTING_TABLES = ["session_listing", "session_accounting"] as const;

/** A file's identity and version as a listing checks it. */
export interface ListingStat {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** A row of `session_listing`. */
export interface ListingRow {
  path: string;
  dev: number;
  ino: number;
  size: number;
  mtime_ms: number;
  listed: number;
  session_id: string | null;
  cwd: string | null;
  title: string | null;
  created_ms: number | null;
  modified_ms: number | null;
  message_count: number | null;
  first_message: string | null;
  parent_session: string | null;
  torn_tail: number | null;
}

/** True when the row was read from the file as it is now (same device, inode, size and mtime). */
export function rowMatches(row: Pick<ListingRow, "dev" | "ino" | "size" | "mtime_ms">, st: ListingStat): boolean {
  return row.dev === st.dev && row.ino === st.ino && row.size === st.size && row.mtime_ms === st.mtimeMs;
}

/** A time as SQLite keeps it: an invalid date (a garbled header timestamp) is NULL. */
function timeOf(date: Date): number | null {
  const ms = date.getTime();
  return Number.isNaN(ms) ? null : ms;
}

/** The listing info a row holds (null: the file has no session header), built as `readSessionInfo` builds it. */
export function infoOfRow(row: ListingRow): SessionInfo | null {
  if (row.listed === 0) return null;
  return {
    path: row.path,
    id: row.session_id ?? "",
    cwd: row.cwd ?? "",
    title: row.title,
    created: new Date(row.created_ms ?? Number.NaN),
    modified: new Date(row.modified_ms ?? Number.NaN),
    size: row.size,
    messageCount: row.message_count ?? 0,
    messageCountExact: true,
    firstMessage: row.first_message,
    parentSession: row.parent_session,
    tornTail: row.torn_tail === 1,
  };
}

/** The statements of the listing table on one connection. */
export class ListingStatements {
  readonly all: SqliteStatement;
  readonly byPath: SqliteStatement;
  readonly upsert: SqliteStatement;
  readonly remove: SqliteStatement;

  constructor(db: SqliteDatabase) {
    this.all = db.prepare("SELECT * FROM session_listing");
    this.byPath = db.prepare("SELECT * FROM session_listing WHERE path = ?");
    this.upsert = db.prepare(
      `INSERT OR REPLACE INTO session_listing (path, dev, ino, size, mtime_ms, listed, session_id, cwd, title, created_ms,
       modified_ms, message_count, first_message, parent_session, torn_tail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.remove = db.prepare("DELETE FROM session_listing WHERE path = ?");
  }

  /** Stores what a file read under `st` lists as (`info` null: no session header). */
  put(path: string, st: ListingStat, info: SessionInfo | null): void {
    if (info === null) {
      this.upsert.run(path, st.dev, st.ino, st.size, st.mtimeMs, 0, null, null, null, null, null, null, null, null, null);
      return;
    }
    this.upsert.run(
      path,
      st.dev,
      st.ino,
      st.size,
      st.mtimeMs,
      1,
      info.id,
      info.cwd,
      info.title,
      timeOf(info.created),
      timeOf(info.modified),
      info.messageCount,
      info.firstMessage,
      info.parentSession,
      info.tornTail ? 1 : 0,
    );
  }
}
