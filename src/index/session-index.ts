import { join, resolve } from "node:path";
import { createHash } from "node:crypto";
import { resolveSessionManagerOptions } from "../session/session-options.ts";
import { storeFromUrl } from "../storage/store-url.ts";
import { TranscriptStoreError, type WarningHandler } from "../errors.ts";
import { defaultRoot, resolveStoreDirs } from "../session/paths.ts";
import type { StorageBackend } from "../storage/session-storage.ts";
import type { SearchRole } from "./entry-text.ts";
import { FileSessionIndex } from "./file-session-index.ts";
import { INDEX_BUSY_TIMEOUT_MS } from "./index-db.ts";

export type { SearchRole } from "./entry-text.ts";

/** Bytes read per refresh transaction. @default 8 MiB */
export const DEFAULT_BATCH_BYTES = 8 << 20;

/** Matches ranked by BM25 before a search lists the newest first instead. @default 5000 */
export const DEFAULT_MAX_RANKED_MATCHES = 5000;

export { HIGHLIGHT_END, HIGHLIGHT_START } from "./snippet.ts";

/** What a refresh (or rebuild) did. */
export interface IndexRefreshReport {
  /** Session files looked at (one stat each). */
  filesSeen: number;
  sessionsAdded: number;
  sessionsUpdated: number;
  /** Rewritten files (another inode, shrunk, another header) indexed again from their start. */
  sessionsReindexed: number;
  sessionsRemoved: number;
  /** Searchable texts added. */
  entriesIndexed: number;
  /** Bytes of session files read past their indexed offsets. */
  bytesRead: number;
  /** Bytes read to check that indexed headers are unchanged. */
  headerBytesRead: number;
  /** Bytes read from spilled tool outputs (each bounded). */
  artifactBytesRead: number;
  /** Lines that are no JSON record (reported by `verify`; skipped here). */
  malformedLines: number;
  /** Lines too long to index (past 16 MiB: inlined images, payloads), read past. */
  largeLinesSkipped: number;
}

/** How far the index is behind the sessions (found by stat alone). */
export interface IndexStatus {
  /** Where the index lives (a file path, or the database's schema). */
  location: string;
  /** Nothing to catch up. */
  fresh: boolean;
  sessionsIndexed: number;
  entriesIndexed: number;
  /** Files new or changed since indexed. */
  sessionsBehind: number;
  /** Bytes those files hold past what is indexed. */
  bytesBehind: number;
  /** Indexed sessions whose files are gone. */
  sessionsGone: number;
}

export interface SearchOptions {
  /** Sessions of this cwd only (compared resolved, exactly). */
  cwd?: string;
  /** Entries at or after this time. */
  since?: Date;
  /** Entries at or before this time. */
  until?: Date;
  roles?: SearchRole[];
  /** Entries of sessions whose model (an assistant's `model`, else the last model change) contains this, any case. */
  model?: string;
  /** A session id or id prefix. */
  session?: string;
  /** @default 20 */
  limit?: number;
  /**
   * `relevance`: BM25 (the file tree) or ts_rank (PostgreSQL) blended with recency, the relevance
   * divided by `1 + age / 30 days` (docs/index.md, "Ranking"); `recent`: newest entry first.
   * @default "relevance"
   */
  sort?: "relevance" | "recent";
  /** The time the recency blend counts ages from. @default the time of the call */
  now?: Date;
  /**
   * False: answer from the index as it is, without catching up with the sessions first (no stat of
   * every session file, no read): hits can miss what was written since the last refresh, and hits of
   * a session removed since lead to a file no longer there. `status()` says how far behind it is.
   * For a caller that refreshes on its own schedule (a long-lived process, a file watcher, `index`
   * run by cron). @default true
   */
  refresh?: boolean;
}

export interface SearchHit {
  sessionId: string;
  /** The session's file (file tree) or its location in the database. */
  location: string;
  /** The entry to continue from: `show <id> --at <entryId>`, `fork <id> --at <entryId>`. */
  entryId: string;
  role: string;
  /** The entry's ISO timestamp (empty when it has none). */
  timestamp: string;
  /** Text around the matches, whitespace collapsed, each match between `HIGHLIGHT_START` and `HIGHLIGHT_END`. */
  snippet: string;
  /** Higher is better. */
  score: number;
  cwd: string;
  /** The session's title: its name, else its first user message (one line, cut); empty when it has neither. */
  title: string;
  /** Other sessions holding a copy of the same entry (forks of it): the hit stands for them too. */
  alsoIn: string[];
}

/** A derived, rebuildable search index over a store's sessions: the session files stay the only truth. */
export interface SessionIndex {
  /** Catches up with the sessions: new, grown, rewritten and removed files. */
  refresh(): Promise<IndexRefreshReport>;
  /** Refreshes (unless `options.refresh` is false), then searches (`INVALID_QUERY` for a query it cannot read). */
  search(query: string, options?: SearchOptions): Promise<SearchHit[]>;
  /** How stale the index is, by stat alone (nothing is read or written). */
  status(): Promise<IndexStatus>;
  /** Drops everything indexed and indexes every session again. */
  rebuild(): Promise<IndexRefreshReport>;
  close(): Promise<void>;
}

export interface SessionIndexOptions {
  /** Store root. @default $TRANSCRIPT_STORE_HOME, else ~/.transcript-store */
  root?: string;
  /** The sessions tree indexed. @default <root>/sessions */
  sessionsDir?: string;
  /** More session trees to index with it (pi's, omp's), as listings take them. */
  roots?: string[];
  /** A database store: its index lives in the database (not built into this backend yet). */
  store?: StorageBackend | string;
  /**
   * The index file. @default <root>/index/sessions.sqlite for <root>/sessions; for a tree elsewhere
   * (pi's, read in place) <root>/index/tree-<hash of its path>.sqlite: nothing is written into it.
   */
  indexPath?: string;
  /** Bytes read per refresh transaction: each commit stores offsets with their rows. @default 8 MiB */
  batchBytes?: number;
  /** How long a refresh waits while another process writes the index, then `STORE_BUSY`. @default 10000 */
  busyTimeoutMs?: number;
  /** Matches ranked by relevance (BM25); a query matching more lists the newest first. @default 5000 */
  maxRankedMatches?: number;
  onWarning?: WarningHandler;
  /** Called before each session file a refresh or rebuild looks at (synchronously, between two files). */
  onProgress?: (progress: IndexProgress) => void;
}

/** Where a refresh or rebuild is: `filesDone` of `filesTotal` session files looked at so far, `path` the next. */
export interface IndexProgress {
  filesDone: number;
  filesTotal: number;
  path: string;
}

export interface ResolvedSessionIndexOptions {
  sessionsDir: string;
  roots: string[];
  indexPath: string;
  batchBytes: number;
  busyTimeoutMs: number;
  maxRankedMatches: number;
  onWarning: WarningHandler;
  onProgress: ((progress: IndexProgress) => void) | null;
}

/** Validates options once and applies the defaults. */
export function resolveSessionIndexOptions(options: SessionIndexOptions = {}): ResolvedSessionIndexOptions {
  if (typeof options !== "object" || options === null) throw new TranscriptStoreError("INVALID_OPTION", "options must be an object");
  for (const key of ["root", "sessionsDir", "indexPath"] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== "string" || value.length === 0))
      throw new TranscriptStoreError("INVALID_OPTION", `${key} must be a non-empty string`);
  }
  if (options.roots !== undefined && (!Array.isArray(options.roots) || options.roots.some((r) => typeof r !== "string" || r === "")))
    throw new TranscriptStoreError("INVALID_OPTION", "roots must be an array of non-empty strings");
  if (options.onWarning !== undefined && typeof options.onWarning !== "function")
    throw new TranscriptStoreError("INVALID_OPTION", "onWarning must be a function");
  const batchBytes = options.batchBytes ?? DEFAULT_BATCH_BYTES;
  if (!Number.isSafeInteger(batchBytes) || batchBytes < 1)
    throw new TranscriptStoreError("INVALID_OPTION", "batchBytes must be a positive integer");
  const busyTimeoutMs = options.busyTimeoutMs ?? INDEX_BUSY_TIMEOUT_MS;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0)
    throw new TranscriptStoreError("INVALID_OPTION", "busyTimeoutMs must be a non-negative integer");
  const maxRankedMatches = options.maxRankedMatches ?? DEFAULT_MAX_RANKED_MATCHES;
  if (!Number.isSafeInteger(maxRankedMatches) || maxRankedMatches < 0)
    throw new TranscriptStoreError("INVALID_OPTION", "maxRankedMatches must be a non-negative integer");
  const root = options.root !== undefined ? resolve(options.root) : defaultRoot();
  const { sessionsDir } = resolveStoreDirs({ root, sessionsDir: options.sessionsDir });
  const roots = (options.roots ?? []).map((r) => resolve(r));
  const own = sessionsDir === join(root, "sessions") && roots.length === 0;
  const tree = createHash("sha256")
    .update([sessionsDir, ...roots].join("\0"))
    .digest("hex")
    .slice(0, 16);
  const indexPath =
    options.indexPath !== undefined ? resolve(options.indexPath) : join(root, "index", own ? "sessions.sqlite" : `tree-${tree}.sqlite`);
  const onWarning = options.onWarning ?? (() => {});
  if (options.onProgress !== undefined && typeof options.onProgress !== "function")
    throw new TranscriptStoreError("INVALID_OPTION", "onProgress must be a function");
  const onProgress = options.onProgress ?? null;
  return { sessionsDir, roots, indexPath, batchBytes, busyTimeoutMs, maxRankedMatches, onWarning, onProgress };
}

/**
 * Opens the index of a store, like a `SessionManager` is opened for it. The file tree's index is an
 * SQLite (FTS5) file loaded lazily through `node:sqlite`: a runtime without it gets
 * `INDEX_UNAVAILABLE` here, and nothing else of the library needs it.
 */
export async function openSessionIndex(options: SessionIndexOptions = {}): Promise<SessionIndex> {
  if (options?.store !== undefined) {
    // a database keeps its index itself (StorageBackend.index: PostgreSQL's is src/storage/postgres/pg-index.ts)
    const backend = typeof options.store === "string" ? storeFromUrl(options.store) : options.store;
    if (backend.index === undefined) throw new TranscriptStoreError("INDEX_UNAVAILABLE", `A ${backend.kind} store keeps no search index`);
    return backend.index(resolveSessionManagerOptions({ onWarning: options.onWarning }));
  }
  const resolved = resolveSessionIndexOptions(options);
  return FileSessionIndex.open(resolved);
}
