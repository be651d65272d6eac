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
-- du's per-session accounting (src/search/accounting-cache.ts), keyed the same way.
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

/**
 * A row of `session_listing`, as an array in `LISTING_COLUMNS` order: a listing decodes thousands,
 * and arrays are made and read faster than objects with fifteen named fields.
 */
export type ListingRow = [
  path: string,
  dev: number,
  ino: number,
  size: number,
  mtime_ms: number,
  listed: number,
  session_id: string | null,
  cwd: string | null,
  title: string | null,
  created_ms: number | null,
  modified_ms: number | null,
  message_count: number | null,
  first_message: string | null,
  parent_session: string | null,
  torn_tail: number | null,
];

const LISTING_COLUMNS =
  "path, dev, ino, size, mtime_ms, listed, session_id, cwd, title, created_ms, modified_ms, message_count, " +
  "first_message, parent_session, torn_tail";

/** True when a row keyed by this stat was read from the file as it is now (same device, inode, size and mtime). */
export function statMatches(dev: number, ino: number, size: number, mtimeMs: number, st: ListingStat): boolean {
  return dev === st.dev && ino === st.ino && size === st.size && mtimeMs === st.mtimeMs;
}

/** True when the row was read from the file as it is now. */
export function rowMatches(row: ListingRow, st: ListingStat): boolean {
  return statMatches(row[1], row[2], row[3], row[4], st);
}

/** A time as SQLite keeps it: an invalid date (a garbled header timestamp) is NULL. */
function timeOf(date: Date): number | null {
  const ms = date.getTime();
  return Number.isNaN(ms) ? null : ms;
}

/** The listing info a row holds (null: the file has no session header), built as `readSessionInfo` builds it. */
export function infoOfRow(row: ListingRow): SessionInfo | null {
  if (row[5] === 0) return null;
  return {
    path: row[0],
    id: row[6] ?? "",
    cwd: row[7] ?? "",
    title: row[8],
    created: new Date(row[9] ?? Number.NaN),
    modified: new Date(row[10] ?? Number.NaN),
    size: row[3],
    messageCount: row[11] ?? 0,
    messageCountExact: true,
    firstMessage: row[12],
    parentSession: row[13],
    tornTail: row[14] === 1,
  };
}

/** A statement returning rows as arrays (`setReturnArrays`, Node 22.16+; else each row's values, in column order). */
function arrayRows(statement: SqliteStatement): {
  all(...params: unknown[]): unknown[][];
  get(...params: unknown[]): unknown[] | undefined;
} {
  const native = statement as SqliteStatement & { setReturnArrays?: (enabled: boolean) => void };
  if (typeof native.setReturnArrays === "function") {
    native.setReturnArrays(true);
    return statement as unknown as { all(...params: unknown[]): unknown[][]; get(...params: unknown[]): unknown[] | undefined };
  }
  return {
    all: (...params) => statement.all(...params).map((row) => Object.values(row)),
    get: (...params) => {
      const row = statement.get(...params);
      return row === undefined ? undefined : Object.values(row);
    },
  };
}

/** The statements of the listing table on one connection. */
export class ListingStatements {
  readonly all: () => ListingRow[];
  readonly byPath: (path: string) => ListingRow | undefined;
  readonly upsert: SqliteStatement;
  readonly remove: SqliteStatement;

  constructor(db: SqliteDatabase) {
    const all = arrayRows(db.prepare(`SELECT ${LISTING_COLUMNS} FROM session_listing`));
    const byPath = arrayRows(db.prepare(`SELECT ${LISTING_COLUMNS} FROM session_listing WHERE path = ?`));
    this.all = () => all.all() as ListingRow[];
    this.byPath = (path) => byPath.get(path) as ListingRow | undefined;
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
