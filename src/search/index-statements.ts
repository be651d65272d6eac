import type { SqliteDatabase, SqliteStatement } from "./sqlite.ts";

/** A session's row in the `sessions` table. */
export interface SessionRow {
  sid: number;
  path: string;
  session_id: string | null;
  cwd: string;
  dev: number;
  ino: number;
  size: number;
  mtime_ms: number;
  offset: number;
  header_start: number;
  header_len: number;
  header_hash: string;
  records: number;
  model: string | null;
}

/** The statements of one index connection. */
export class IndexStatements {
  readonly byPath: SqliteStatement;
  readonly insertSession: SqliteStatement;
  readonly updateSession: SqliteStatement;
  readonly deleteText: SqliteStatement;
  readonly deleteEntries: SqliteStatement;
  readonly deleteSession: SqliteStatement;
  readonly insertEntry: SqliteStatement;
  readonly insertText: SqliteStatement;

  constructor(db: SqliteDatabase) {
    this.byPath = db.prepare("SELECT * FROM sessions WHERE path = ?");
    this.insertSession = db.prepare(
      "INSERT INTO sessions (path, dev, ino, size, mtime_ms, offset) VALUES (?, ?, ?, 0, -1, 0) RETURNING sid",
    );
    this.updateSession = db.prepare(
      `UPDATE sessions SET session_id = ?, cwd = ?, dev = ?, ino = ?, size = ?, mtime_ms = ?, offset = ?, header_start = ?,
       header_len = ?, header_hash = ?, records = ?, model = ? WHERE sid = ?`,
    );
    this.deleteText = db.prepare("DELETE FROM entries_text WHERE rowid IN (SELECT id FROM entries WHERE sid = ?)");
    this.deleteEntries = db.prepare("DELETE FROM entries WHERE sid = ?");
    this.deleteSession = db.prepare("DELETE FROM sessions WHERE sid = ?");
    this.insertEntry = db.prepare(
      "INSERT INTO entries (sid, entry_id, role, ts, ts_ms, model, line_offset, line_len) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    );
    this.insertText = db.prepare("INSERT INTO entries_text (rowid, text) VALUES (?, ?)");
  }
}
