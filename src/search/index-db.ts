import { dirname } from "node:path";
import { TranscriptStoreError, type WarningHandler } from "../errors.ts";
import { ensureDir, io } from "../io.ts";
import { configureErasure, ensureFtsSecureDelete, hasFtsSecureDelete } from "./index-erasure.ts";
import { claimIndexFile, proveOwnership, signIndex } from "./index-ownership.ts";
import type { SqliteDatabase, SqliteOpen } from "./sqlite.ts";
import { LISTING_SCHEMA, LISTING_TABLES } from "./listing-table.ts";
import { FTS_SETTINGS, SEARCH_TEXT_TABLES, TEXT_TABLES } from "./text-tables.ts";

/** The index schema's version (`PRAGMA user_version`); another version is dropped and rebuilt. */
export const INDEX_SCHEMA_VERSION = 5;

/** How long a refresh waits for another process's transaction on the index (then `STORE_BUSY`). @default 10000 */
export const INDEX_BUSY_TIMEOUT_MS = 10_000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS sessions (
  sid INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  session_id TEXT,
  cwd TEXT NOT NULL DEFAULT '',
  dev INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  size INTEGER NOT NULL,
  mtime_ms REAL NOT NULL,
  offset INTEGER NOT NULL,
  header_start INTEGER NOT NULL DEFAULT 0,
  header_len INTEGER NOT NULL DEFAULT 0,
  header_hash TEXT NOT NULL DEFAULT '',
  records INTEGER NOT NULL DEFAULT 0,
  model TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS sessions_session_id ON sessions(session_id);
CREATE TABLE IF NOT EXISTS entries (
  id INTEGER PRIMARY KEY,
  sid INTEGER NOT NULL,
  entry_id TEXT NOT NULL,
  role TEXT NOT NULL,
  ts TEXT NOT NULL,
  ts_ms INTEGER,
  model TEXT,
  line_offset INTEGER NOT NULL,
  line_len INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS entries_sid ON entries(sid);
${SEARCH_TEXT_TABLES}
`;

/** SQLite's primary result code of a failed call, if it is one. */
function sqliteCode(err: unknown): number | null {
  const errcode = (err as { errcode?: unknown } | null)?.errcode;
  return typeof errcode === "number" ? errcode & 0xff : null;
}

/** True for SQLITE_BUSY / SQLITE_LOCKED: another process held the index past the busy timeout. */
export function isBusyError(err: unknown): boolean {
  const code = sqliteCode(err);
  return code === 5 || code === 6;
}

/**
 * The coded error for an SQLite failure that is no damage: busy past the timeout → `STORE_BUSY`;
 * anything else (disk full, I/O error, no permission) → `PERSISTENCE_FAILED`. Other errors as they are.
 */
export function codedIndexError(err: unknown, path: string): unknown {
  if (err instanceof TranscriptStoreError || sqliteCode(err) === null) return err;
  const message = (err as Error).message;
  if (isBusyError(err)) return new TranscriptStoreError("STORE_BUSY", `Another process holds the index: ${message}`, { path, cause: err });
  return new TranscriptStoreError("PERSISTENCE_FAILED", `The index failed: ${message}`, { path, cause: err });
}

/** True for SQLite's "database disk image is malformed" (SQLITE_CORRUPT) and "file is not a database" (SQLITE_NOTADB). */
export function isCorruptionError(err: unknown): boolean {
  const errcode = (err as { errcode?: unknown } | null)?.errcode;
  if (typeof errcode === "number") return (errcode & 0xff) === 11 || (errcode & 0xff) === 26;
  return /malformed|not a database/i.test(String((err as Error)?.message ?? ""));
}

/** Removes an index file with its WAL and shared-memory files. */
export function removeIndexFiles(path: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) io.rmSync(path + suffix, { force: true });
}

function configure(db: SqliteDatabase, sessionsDir: string, busyTimeoutMs: number): "fresh" | "kept" | "reset" {
  db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  db.exec("PRAGMA journal_mode = WAL");
  configureErasure(db);
  db.exec("PRAGMA synchronous = NORMAL");
  const version = Number(db.prepare("PRAGMA user_version").get()?.user_version ?? 0);
  let state: "fresh" | "kept" | "reset" = version === 0 ? "fresh" : "kept";
  if (version !== 0 && version !== INDEX_SCHEMA_VERSION) state = "reset";
  if (state === "kept") {
    const tree = db.prepare("SELECT value FROM meta WHERE key = 'sessionsDir'").get()?.value;
    if (tree !== sessionsDir) state = "reset";
  }
  if (state === "reset") {
    db.exec("BEGIN IMMEDIATE");
    for (const table of TEXT_TABLES) db.exec(`DROP TABLE IF EXISTS ${table}`);
    db.exec("DROP TABLE IF EXISTS entries; DROP TABLE IF EXISTS sessions; DROP TABLE IF EXISTS meta;");
    for (const table of LISTING_TABLES) db.exec(`DROP TABLE IF EXISTS ${table}`);
    db.exec("COMMIT");
  }
  if (state !== "kept") {
    db.exec("BEGIN IMMEDIATE");
    db.exec(SCHEMA);
    db.exec(LISTING_SCHEMA);
    db.exec(FTS_SETTINGS);
    db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('sessionsDir', ?)").run(sessionsDir);
    db.exec(`PRAGMA user_version = ${INDEX_SCHEMA_VERSION}`);
    signIndex(db);
    ensureFtsSecureDelete(db);
    db.exec("COMMIT");
  } else upgradeKept(db);
  return state;
}

/** An I/O failure of the claim, coded; a refusal as it is. */
function coded(err: unknown, path: string): unknown {
  if (err instanceof TranscriptStoreError) return err;
  return new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot create the index file: ${(err as Error).message}`, { path, cause: err });
}

/** `proveOwnership` on an open database: one it cannot even read is not provably ours (`OUTPUT_EXISTS`, untouched). */
function prove(db: SqliteDatabase, path: string, busyTimeoutMs: number): void {
  db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  try {
    proveOwnership(db, path);
  } catch (err) {
    if (!isCorruptionError(err)) throw err;
    throw new TranscriptStoreError(
      "OUTPUT_EXISTS",
      `The index path holds a damaged database that is not provably this library's index; it is left as it is: ${(err as Error).message}`,
      { path, cause: err },
    );
  }
}

/**
 * Opens (creating, 0600 in a 0700 directory) the index database at `path` for the sessions tree
 * `sessionsDir`. Nothing is written before the file is proven the index's own
 * (src/search/index-ownership.ts): anything else at the path is `OUTPUT_EXISTS`, left as it is. An
 * index of ours that is damaged is deleted and created anew (`INDEX_REBUILT` warning): the index is
 * derived, the sessions are the truth. An index of another schema version or another tree starts
 * over too.
 */
export function openIndexDatabase(
  open: SqliteOpen,
  path: string,
  sessionsDir: string,
  onWarning: WarningHandler,
  busyTimeoutMs: number = INDEX_BUSY_TIMEOUT_MS,
): SqliteDatabase {
  try {
    ensureDir(dirname(path));
  } catch (err) {
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot create the index directory: ${(err as Error).message}`, {
      path,
      cause: err,
    });
  }
  let db: SqliteDatabase | null = null;
  let claim: "created" | "ours" | "check";
  try {
    claim = claimIndexFile(path);
  } catch (err) {
    throw coded(err, path);
  }
  try {
    db = open(path);
    if (claim === "check") prove(db, path, busyTimeoutMs);
    const state = configure(db, sessionsDir, busyTimeoutMs);
    if (state === "reset") onWarning({ code: "INDEX_REBUILT", message: "The index was of another version or tree; it is rebuilt", path });
    return db;
  } catch (err) {
    try {
      db?.close();
    } catch {
      // closing a damaged database may fail too; its files are removed next
    }
    if (!isCorruptionError(err)) throw codedIndexError(err, path);
    onWarning({ code: "INDEX_REBUILT", message: `The index file was damaged (${(err as Error).message}); it is rebuilt`, path });
    removeIndexFiles(path);
    claimIndexFile(path);
    db = open(path);
    configure(db, sessionsDir, busyTimeoutMs);
    return db;
  }
}

/** An index kept from an older build: signed as ours, and FTS5's secure-delete turned on. */
function upgradeKept(db: SqliteDatabase): void {
  const unsigned = Number(db.prepare("PRAGMA application_id").get()?.application_id ?? 0) === 0;
  if (!unsigned && hasFtsSecureDelete(db)) return;
  db.exec("BEGIN IMMEDIATE");
  if (unsigned) signIndex(db);
  ensureFtsSecureDelete(db);
  db.exec("COMMIT");
}
