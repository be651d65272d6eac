import { constants } from "node:fs";
import { TranscriptStoreError } from "../errors.ts";
import { closeQuietly, FILE_MODE, io } from "../io.ts";
import { createExclusive } from "../io-exclusive.ts";
import type { SqliteDatabase } from "./sqlite.ts";

/**
 * The index's signature: SQLite's `PRAGMA application_id` (4 bytes at offset 68 of the file's
 * header), "TSIX". Every index this library creates carries it; only a file that carries it (or an
 * index made before it, proven by its own tables) is ever written, reset or replaced.
 */
export const INDEX_APPLICATION_ID = 0x54534958;

const SQLITE_MAGIC = Buffer.from("SQLite format 3\0", "latin1");

/**
 * What is at an index path before SQLite opens it: `created` (nothing was there: an empty 0600
 * file is made, through the store's exclusive creator, so SQLite's WAL and shared-memory files
 * take its mode), `ours` (an SQLite header with our application id), `check` (an SQLite file or an
 * empty file without it: `proveOwnership` decides once it is open). Anything else (a note, a
 * session file, `lifecycle.jsonl`, a directory, a link) → `OUTPUT_EXISTS`, untouched.
 */
export function claimIndexFile(path: string): "created" | "ours" | "check" {
  for (const suffix of SIBLINGS) checkSibling(path, suffix);
  let stat = io.lstatSync(path, { throwIfNoEntry: false });
  if (stat === undefined) {
    if (createExclusive(path)) return "created";
    stat = io.lstatSync(path);
  }
  if (!stat.isFile()) refuse(path, "it is no regular file");
  if (stat.size === 0) return "check";
  const head = Buffer.alloc(100);
  let fd: number | undefined;
  let read = 0;
  try {
    fd = io.openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    read = io.readSync(fd, head, 0, head.length, 0);
  } finally {
    closeQuietly(fd);
  }
  if (read < head.length || !head.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) refuse(path, "it is no SQLite database");
  if (head.readUInt32BE(68) !== INDEX_APPLICATION_ID) return "check";
  tightenMode(path);
  return "ours";
}

/** The files SQLite keeps beside a database and takes as its own (a WAL it cannot read is discarded). */
const SIBLINGS = ["-wal", "-shm", "-journal"] as const;

/**
 * A file at `<path>-wal`, `-shm` or `-journal` must be SQLite's (empty, or its header's magic),
 * else `OUTPUT_EXISTS`: SQLite would discard, rewrite or delete it.
 */
function checkSibling(path: string, suffix: (typeof SIBLINGS)[number]): void {
  const stat = io.lstatSync(path + suffix, { throwIfNoEntry: false });
  if (stat === undefined) return;
  if (!stat.isFile()) refuse(path + suffix, `${suffix} beside it is no regular file`);
  if (stat.size === 0) return;
  const head = Buffer.alloc(8);
  let fd: number | undefined;
  let read = 0;
  try {
    fd = io.openSync(path + suffix, constants.O_RDONLY | constants.O_NOFOLLOW);
    read = io.readSync(fd, head, 0, head.length, 0);
  } finally {
    closeQuietly(fd);
  }
  if (read < head.length || !sqliteSibling(suffix, head)) refuse(path + suffix, `${suffix} beside it is no SQLite file`);
}

/** A WAL's magic, a shared-memory file's version (either byte order) or a rollback journal's magic; or a zeroed header. */
function sqliteSibling(suffix: (typeof SIBLINGS)[number], head: Buffer): boolean {
  if (suffix === "-wal") return (head.readUInt32BE(0) & ~1) === 0x377f0682;
  if (suffix === "-shm") return head.readUInt32LE(0) === 3007000 || head.readUInt32BE(0) === 3007000 || head.every((b) => b === 0);
  return head.equals(JOURNAL_MAGIC) || head.every((b) => b === 0);
}

const JOURNAL_MAGIC = Buffer.from("d9d505f920a163d7", "hex");

/**
 * Proves, once SQLite has opened it and before anything is written, that the database at `path` is
 * an index of ours: our application id (maybe still in the WAL), an empty database (nothing to
 * lose), or an index made by an older version (no application id, but `meta.sessionsDir` and the
 * `entries_text` table). Another application's database → `OUTPUT_EXISTS`; nothing of it dropped.
 */
export function proveOwnership(db: SqliteDatabase, path: string): void {
  if (!isOurs(db)) refuse(path, "it is an SQLite database this library did not make");
  tightenMode(path);
}

function isOurs(db: SqliteDatabase): boolean {
  const id = Number(db.prepare("PRAGMA application_id").get()?.application_id ?? 0);
  if (id === INDEX_APPLICATION_ID) return true;
  if (id !== 0) return false;
  const names = new Set(
    db
      .prepare("SELECT name FROM sqlite_master")
      .all()
      .map((row) => String(row.name)),
  );
  if (names.size === 0) return true; // an empty database: nothing to lose
  const version = Number(db.prepare("PRAGMA user_version").get()?.user_version ?? 0);
  if (version < 1 || !names.has("meta") || !names.has("entries_text") || !names.has("sessions")) return false;
  return typeof db.prepare("SELECT value FROM meta WHERE key = 'sessionsDir'").get()?.value === "string";
}

/** Marks a database as ours (inside the transaction that creates its schema). */
export function signIndex(db: SqliteDatabase): void {
  db.exec(`PRAGMA application_id = ${INDEX_APPLICATION_ID}`);
}

/** An index of ours made with looser modes (0644 by an older version) is brought to 0600, with its WAL and shared-memory files. */
function tightenMode(path: string): void {
  for (const suffix of ["", "-wal", "-shm"]) {
    const stat = io.lstatSync(path + suffix, { throwIfNoEntry: false });
    if (stat?.isFile() && (stat.mode & 0o777) !== FILE_MODE) io.chmodSync(path + suffix, FILE_MODE);
  }
}

function refuse(path: string, why: string): never {
  throw new TranscriptStoreError(
    "OUTPUT_EXISTS",
    `The index path holds a file that is not this library's index (${why}); it is left as it is: name another --index / indexPath`,
    { path },
  );
}
