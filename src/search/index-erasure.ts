import type { SqliteDatabase } from "./sqlite.ts";

/**
 * What is deleted from the index leaves no bytes behind (issue 32, #10): SQLite zeroes the content
 * it frees (`secure_delete`, per connection: the listing cache's rows, the FTS5 segments it drops),
 * and FTS5 removes a deleted row's entries from its segments at once (`secure-delete`).
 */
export function configureErasure(db: SqliteDatabase): void {
  db.exec("PRAGMA secure_delete = ON");
}

/** Turns on FTS5's `secure-delete` in an index that does not have it yet (inside the caller's write transaction). */
export function ensureFtsSecureDelete(db: SqliteDatabase): void {
  if (hasFtsSecureDelete(db)) return;
  try {
    db.exec("INSERT INTO entries_text (entries_text, rank) VALUES ('secure-delete', 1)");
  } catch (err) {
    // an SQLite before 3.42 (an older Bun) has no such option: `eraseDeleted`'s optimize still drops the terms
    // (FTS5 says "SQL logic error", SQLITE_ERROR); anything else (busy, I/O, damage) is thrown
    if (((err as { errcode?: number } | null)?.errcode ?? -1) !== 1) throw err;
  }
}

/** True when the index's FTS5 table has `secure-delete` on. */
export function hasFtsSecureDelete(db: SqliteDatabase): boolean {
  return Number(db.prepare("SELECT v FROM entries_text_config WHERE k = 'secure-delete'").get()?.v ?? 0) === 1;
}

/**
 * After texts were deleted from the index (a session removed, purged, rewritten by redact): FTS5's
 * secure-delete drops their entries but may keep a term in a segment's key list, so the segments
 * are merged into one (`optimize`, which writes only live terms; the pages it frees are zeroed),
 * and the WAL, which may still hold old page images, is checkpointed and truncated. Costs a
 * rewrite of the FTS5 index: only done when something was deleted.
 */
export function eraseDeleted(db: SqliteDatabase): void {
  db.exec("INSERT INTO entries_text (entries_text) VALUES ('optimize')");
  checkpointTruncate(db);
}

/** Moves the WAL into the database and truncates it to nothing (best effort: a reader in another process may hold it). */
export function checkpointTruncate(db: SqliteDatabase): void {
  db.prepare("PRAGMA wal_checkpoint(TRUNCATE)").get();
}
