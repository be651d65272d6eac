import { existsSync } from "node:fs";
import type { WarningHandler } from "../errors.ts";
import type { ListIndexMode, ListingInfoReader } from "../session/discovery.ts";
import type { SessionInfo } from "../session/session-info.ts";
import { INDEX_SCHEMA_VERSION, isBusyError, isCorruptionError, openIndexDatabase } from "./index-db.ts";
import { ListingCache } from "./listing-cache.ts";
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
  const version = Number(db.prepare("PRAGMA user_version").get()?.user_version ?? 0);
  if (version !== INDEX_SCHEMA_VERSION) return null;
  const recorded = db.prepare("SELECT value FROM meta WHERE key = 'sessionsDir'").get()?.value;
  return recorded === tree ? db : null;
}

function unavailable(onWarning: WarningHandler | undefined, path: string, err: unknown): void {
  if (isBusyError(err)) return; // another process is writing it: listed from the files, nothing to report
  onWarning?.({
    code: "INDEX_UNAVAILABLE",
    message: `The index cannot be read (${(err as Error).message}); sessions are listed from their files`,
    path,
  });
}

/**
 * Opens the index for a listing, or returns null: mode "off"; no index file ("auto" creates none);
 * no `node:sqlite`; an index of another schema version or tree (the next `search` or `index`
 * rebuilds it); a damaged or unreadable one (`INDEX_UNAVAILABLE` warning). A listing never fails
 * because of its index: without one it reads the files as it always did.
 */
export async function openListingReader(options: ListingIndexOptions): Promise<ListingReader | null> {
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
  let cache: ListingCache;
  try {
    if (mode === "create") db = openIndexDatabase(open, indexPath, tree, options.onWarning ?? (() => {}), LISTING_BUSY_TIMEOUT_MS);
    else {
      const existing = open(indexPath);
      db = existing;
      if (openExisting(existing, tree) === null) {
        existing.close();
        return null;
      }
    }
    cache = new ListingCache(db);
  } catch (err) {
    try {
      db?.close();
    } catch {
      // a damaged database may not close cleanly
    }
    unavailable(options.onWarning, indexPath, err);
    return null;
  }
  const live = db;
  return {
    read(paths, readOne) {
      let infos: Array<SessionInfo | null>;
      try {
        const pass = cache.pass(paths, Date.now());
        infos = pass.infos;
        try {
          cache.store(pass, null);
        } catch (err) {
          // Not written back (busy, read-only, disk full): the listing stands, the next one reads those files again.
          if (isCorruptionError(err)) unavailable(options.onWarning, indexPath, err);
        }
      } catch (err) {
        unavailable(options.onWarning, indexPath, err);
        infos = paths.map(readOne);
      }
      return infos;
    },
    close() {
      live.close();
    },
  };
}
