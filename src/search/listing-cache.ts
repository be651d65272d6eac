import type { Stats } from "node:fs";
import { io } from "../io.ts";
import { readSessionListing, type InfoStat, type SessionInfo } from "../session/session-info.ts";
import { infoOfRow, type ListingRow, type ListingStat, ListingStatements, rowMatches } from "./listing-table.ts";
import type { SqliteDatabase } from "./sqlite.ts";

/**
 * A file modified this recently is listed but not cached: a rewrite of the same size within the
 * file system's clock tick would keep its mtime, and the row would look fresh (git's "racily
 * clean" entries). Session files are append-only, so this only delays caching the active ones.
 * @default 3000
 */
export const LISTING_RACY_MS = 3000;

/** Above this many files a listing loads the whole table once instead of one look-up per file. */
const LOAD_ALL_ABOVE = 64;

export function statOf(path: string): Stats | null {
  try {
    return io.statSync(path);
  } catch {
    return null;
  }
}

/** The stat a listing was read under, when it can key a row: it has an identity and is not racily recent. */
export function cacheKey(st: InfoStat, now: number): ListingStat | null {
  if (st.dev === undefined || st.ino === undefined || st.mtimeMs > now - LISTING_RACY_MS) return null;
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
}

/** What a pass over files found: their infos in order, and the rows to write back. */
interface ListingPass {
  infos: Array<SessionInfo | null>;
  stale: Array<{ path: string; st: ListingStat; info: SessionInfo | null }>;
  gone: string[];
}

/** The listing rows of one index connection: looked up by stat, re-read and rewritten when stale. */
export class ListingCache {
  private readonly statements: ListingStatements;

  constructor(private readonly db: SqliteDatabase) {
    this.statements = new ListingStatements(db);
  }

  private rowsOf(paths: string[]): (path: string) => ListingRow | undefined {
    if (paths.length <= LOAD_ALL_ABOVE) return this.statements.byPath;
    const rows = new Map<string, ListingRow>();
    for (const row of this.statements.all()) rows.set(row[0], row);
    return (path) => rows.get(path);
  }

  /**
   * The listing info of each file: its row when the file's stat still matches it, else read from
   * the file (as a listing without an index reads it). Nothing is written here.
   */
  pass(paths: string[], now: number): ListingPass {
    const rowOf = this.rowsOf(paths);
    const out: ListingPass = { infos: [], stale: [], gone: [] };
    for (const path of paths) {
      const st = statOf(path);
      const row = rowOf(path);
      if (st !== null && row !== undefined && rowMatches(row, st)) {
        out.infos.push(infoOfRow(row));
        continue;
      }
      const read = readSessionListing(path);
      out.infos.push(read?.info ?? null);
      const key = read === null ? null : cacheKey(read.stat, now);
      if (key !== null) out.stale.push({ path, st: key, info: read!.info });
      else if (row !== undefined) out.gone.push(path);
    }
    return out;
  }

  /** Writes back what a pass re-read (one transaction); given `seen` (the whole tree), rows of files not in it are dropped. */
  store(pass: ListingPass, seen: string[] | null): void {
    let gone = pass.gone;
    if (seen !== null) {
      const set = new Set(seen);
      // the rows of files gone from the tree, and those of files changed too recently to cache (a
      // stale row would keep what the file no longer holds: a redacted first message)
      gone = [
        ...pass.gone,
        ...this.statements
          .all()
          .map((r) => r[0])
          .filter((p) => !set.has(p)),
      ];
    }
    if (pass.stale.length === 0 && gone.length === 0) return;
    this.db.exec("BEGIN IMMEDIATE");
    try {
      for (const { path, st, info } of pass.stale) this.statements.put(path, st, info);
      for (const path of gone) this.statements.remove.run(path);
      this.db.exec("COMMIT");
    } catch (err) {
      try {
        this.db.exec("ROLLBACK");
      } catch {
        // the failure ended the transaction already
      }
      throw err;
    }
  }

  /** Brings the rows of every file of a tree up to date (`index` refresh and rebuild): `paths` is the whole tree. */
  refresh(paths: string[], now: number): void {
    this.store(this.pass(paths, now), paths);
  }
}
