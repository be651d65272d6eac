import type { SearchRole } from "./entry-text.ts";

/**
 * The search index as the storage seam names it (`StorageBackend.index()`): what a refresh did,
 * how stale it is, a search and its hits. Any backend's index implements `SessionIndex`; the file
 * tree's is file-session-index.ts, opened by `openSessionIndex` (session-index.ts).
 */

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
