import { join, resolve } from "node:path";
import { createHash } from "node:crypto";
import { resolveSessionManagerOptions } from "../session/session-options.ts";
import { storeFromUrl } from "../storage/store-url.ts";
import { TranscriptStoreError, type WarningHandler } from "../errors.ts";
import { defaultRoot, resolveStoreDirs } from "../session/paths.ts";
import type { StorageBackend } from "../storage/session-storage.ts";
import type { SessionIndex } from "./index-types.ts";
import { FileSessionIndex } from "./file-session-index.ts";
import { INDEX_BUSY_TIMEOUT_MS } from "./index-db.ts";

export type { SearchRole } from "./entry-text.ts";

/** Bytes read per refresh transaction. @default 8 MiB */
export const DEFAULT_BATCH_BYTES = 8 << 20;

/** Matches ranked by BM25 before a search lists the newest first instead. @default 5000 */
export const DEFAULT_MAX_RANKED_MATCHES = 5000;

export { HIGHLIGHT_END, HIGHLIGHT_START } from "./snippet.ts";

export type { IndexRefreshReport, IndexStatus, SearchHit, SearchOptions, SessionIndex } from "./index-types.ts";

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
    if (!backend.supports.index || backend.index === undefined)
      throw new TranscriptStoreError("INDEX_UNAVAILABLE", "this store does not support a search index");
    return backend.index(resolveSessionManagerOptions({ onWarning: options.onWarning }));
  }
  const resolved = resolveSessionIndexOptions(options);
  return FileSessionIndex.open(resolved);
}
