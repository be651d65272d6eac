import { existsSync } from "node:fs";
import { TranscriptStoreError, type WarningHandler } from "../errors.ts";
import type { ListIndexMode, ListingInfoReader } from "../session/discovery.ts";
import { INDEX_SCHEMA_VERSION, isBusyError, isCorruptionError, openIndexDatabase } from "./index-db.ts";
import { configureErasure } from "./index-erasure.ts";
import { ListingCache } from "./listing-cache.ts";
import { LISTING_TABLES } from "./listing-table.ts";
import { resolveSessionIndexOptions } from "./session-index.ts";
import { loadSqlite, type SqliteDatabase } from "./sqlite.ts";

/** How long a listing waits for another process's write to the index before listing without writing back. @default 200 */
export const LISTING_BUSY_TIMEOUT_MS = 200;

/** Where a listing looks for the index, as `openSessionIndex` places it for the same tree. */
export interface ListingIndexOptions {
  root?: string;
  sessionsDir: string;
  roots?: string[];
  indexPath?: string;
  /** @default "auto" */
  mode?: ListIndexMode;
  onWarning?: WarningHandler;
}

/** A listing's connection to the index: `read` for `DiscoveryOptions.readInfos`, then `close`. */
export interface ListingReader {
  read: ListingInfoReader;
  close(): void;
}

/** The tree key the index records (`meta.sessionsDir`): an index of another tree is not read. */
function treeKey(sessionsDir: string, roots: string[]): string {
  return [sessionsDir, ...roots].join("\n");
}

/** The index as it is, if it is of this schema and this tree; null (nothing written) otherwise. */
function openExisting(db: SqliteDatabase, tree: string): SqliteDatabase | null {
  db.exec(`PRAGMA busy_timeout = ${LISTING_BUSY_TIMEOUT_MS}`);
  configureErasure(db); // rows it rewrites or drops leave no bytes behind
  const version = Number(db.prepare("PRAGMA user_version").get()?.user_version ?? 0);
  if (version !== INDEX_SCHEMA_VERSION) return null;
  const recorded = db.prepare("SELECT value FROM meta WHERE key = 'sessionsDir'").get()?.value;
  if (recorded !== tree) return null;
  // An index made by a build without these tables at the same version number: no rows to serve yet.
  const tables = db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('${LISTING_TABLES.join("', '")}')`);
  return Number(tables.get()?.n ?? 0) === LISTING_TABLES.length ? db : null;
}

export function unavailable(onWarning: WarningHandler | undefined, path: string, err: unknown): void {
  // Another process is writing it (raw, or as opening it codes it): listed from the files, nothing to report.
  if (isBusyError(err) || (err instanceof TranscriptStoreError && err.code === "STORE_BUSY")) return;
  onWarning?.({
    code: "INDEX_UNAVAILABLE",
    message: `The index cannot be read (${(err as Error).message}); sessions are listed from their files`,
    path,
  });
}

/**
 * Opens the index for a reader of its cached per-file facts (listing, accounting), or returns
 * null: mode "off"; no index file ("auto" creates none); no `node:sqlite`; an index of another
 * schema version or tree (the next `search` or `index` rebuilds it); a damaged or unreadable one
 * (`INDEX_UNAVAILABLE` warning). Its reader never fails because of it: without one it reads the
 * files as it always did.
 */
export async function openFactsDatabase(options: ListingIndexOptions): Promise<{ db: SqliteDatabase; indexPath: string } | null> {
  const mode = options.mode ?? "auto";
  if (mode === "off") return null;
  let resolved;
  try {
    resolved = resolveSessionIndexOptions({
      root: options.root,
      sessionsDir: options.sessionsDir,
      roots: options.roots,
      indexPath: options.indexPath,
    });
  } catch {
    return null;
  }
  const { indexPath } = resolved;
  const tree = treeKey(resolved.sessionsDir, resolved.roots);
  if (mode === "auto" && !existsSync(indexPath)) return null;
  let open;
  try {
    open = await loadSqlite();
  } catch {
    return null;
  }
  let db: SqliteDatabase | null = null;
  try {
    if (mode === "create") db = openIndexDatabase(open, indexPath, tree, options.onWarning ?? (() => {}), LISTING_BUSY_TIMEOUT_MS);
    else {
      db = open(indexPath);
      if (openExisting(db, tree) === null) {
        db.close();
        return null;
      }
    }
    return { db, indexPath };
  } catch (err) {
    try {
      db?.close();
    } catch {
      // a damaged database may not close cleanly
    }
    unavailable(options.onWarning, indexPath, err);
    return null;
  }
}

/** Runs `write`; a failure is not the reader's (busy, read-only, disk full: the next one reads those files again), damage is said. */
export function writeBack(write: () => void, indexPath: string, onWarning: WarningHandler | undefined): void {
  try {
    write();
  } catch (err) {
    if (isCorruptionError(err)) unavailable(onWarning, indexPath, err);
  }
}

/** Opens the index for a listing (see `openFactsDatabase`), or returns null: the listing reads the files. */
export async function openListingReader(options: ListingIndexOptions): Promise<ListingReader | null> {
  const opened = await openFactsDatabase(options);
  if (opened === null) return null;
  const { db, indexPath } = opened;
  let cache: ListingCache;
  try {
    cache = new ListingCache(db);
  } catch (err) {
    db.close();
    unavailable(options.onWarning, indexPath, err);
    return null;
  }
  return {
    read(paths, readOne) {
      try {
        const pass = cache.pass(paths, Date.now());
        writeBack(() => cache.store(pass, null), indexPath, options.onWarning);
        return pass.infos;
      } catch (err) {
        unavailable(options.onWarning, indexPath, err);
        return paths.map(readOne);
      }
    },
    close() {
      db.close();
    },
  };
}
