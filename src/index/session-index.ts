/**
 * The store index (issue 24): derived from the sessions and rebuildable, never the source of truth.
 * The file tree and PostgreSQL implement the same interface; a backend opens it (`StorageBackend.index`).
 */

/** What a refresh or rebuild read and changed. */
export interface IndexRefreshReport {
  sessionsIndexed: number;
  entriesIndexed: number;
  bytesRead: number;
  removed: number;
}

/** How far the index is behind the store. */
export interface IndexStatus {
  fresh: boolean;
  sessionsBehind: number;
  bytesBehind: number;
}

export interface SessionIndex {
  refresh(): Promise<IndexRefreshReport>; // { sessionsIndexed: number; entriesIndexed: number; bytesRead: number; removed: number }
  search(query: string, options?: SearchOptions): Promise<SearchHit[]>;
  status(): Promise<IndexStatus>; // { fresh: boolean; sessionsBehind: number; bytesBehind: number }
  rebuild(): Promise<IndexRefreshReport>;
  close(): Promise<void>;
}

export interface SearchOptions {
  cwd?: string;
  since?: Date;
  until?: Date;
  roles?: ("user" | "assistant" | "toolResult" | "thinking")[];
  model?: string;
  session?: string;
  limit?: number;
}

export interface SearchHit {
  sessionId: string;
  location: string;
  entryId: string;
  role: string;
  timestamp: string;
  snippet: string;
  score: number;
  cwd: string;
}
