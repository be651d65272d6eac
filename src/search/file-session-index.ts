import type { Stats } from "node:fs";
import { TranscriptStoreError } from "../errors.ts";
import { io } from "../io.ts";
import { sessionFilePaths } from "../session/discovery.ts";
import { codedIndexError, isCorruptionError, openIndexDatabase, removeIndexFiles } from "./index-db.ts";
import { parseQuery, toStemmedMatch } from "./index-query.ts";
import { holdsExactForms } from "./exact-forms.ts";
import { distinctHits } from "./hit-copies.ts";
import { sessionTitles } from "./hit-titles.ts";
import type { ArtifactReader } from "./artifact-text.ts";
import { readHitText } from "./hit-text.ts";
import { HIGHLIGHT_END, HIGHLIGHT_START, makeSnippet } from "./snippet.ts";
import { searchFilters } from "./search-filters.ts";
import { blendedScore, COUNT_MATCHES_SQL, searchSql } from "./search-sql.ts";
import { KnownFiles } from "./known-files.ts";
import { SessionCatchUp, unchangedFile } from "./session-catch-up.ts";
import type {
  IndexRefreshReport,
  IndexStatus,
  ResolvedSessionIndexOptions,
  SearchHit,
  SearchOptions,
  SessionIndex,
} from "./session-index.ts";
import { emptyRefreshReport } from "./refresh-report.ts";
import { ListingCache } from "./listing-cache.ts";
import { eraseDeleted } from "./index-erasure.ts";
import { LISTING_SCHEMA, LISTING_TABLES } from "./listing-table.ts";
import { TEXT_TABLES } from "./text-tables.ts";
import { loadSqlite, type SqliteDatabase, type SqliteOpen, type SqliteStatement } from "./sqlite.ts";

/** The file tree's index: an SQLite file with an FTS5 table, caught up from the session files. */
export class FileSessionIndex implements SessionIndex {
  private db!: SqliteDatabase;
  private catchUp!: SessionCatchUp;
  private knownFiles!: KnownFiles;
  /** Search statements by SQL (a few shapes: with or without filters, ranked or newest first). */
  private statements = new Map<string, SqliteStatement>();
  private closed = false;
  /** Texts were deleted from the index since its last erasure (see `eraseDeleted`). */
  private erasePending = false;

  private constructor(
    private readonly options: ResolvedSessionIndexOptions,
    private readonly open: SqliteOpen,
  ) {
    this.db = this.openDatabase();
    try {
      // Preparing the statements reads the tables' schema (FTS5's too): damage can show here first.
      this.catchUp = new SessionCatchUp(this.db);
      this.knownFiles = new KnownFiles(this.db);
    } catch (err) {
      if (!isCorruptionError(err)) {
        this.db.close();
        throw codedIndexError(err, this.options.indexPath);
      }
      this.startOver(err);
    }
  }

  static async open(options: ResolvedSessionIndexOptions): Promise<FileSessionIndex> {
    return new FileSessionIndex(options, await loadSqlite());
  }

  private openDatabase(): SqliteDatabase {
    return openIndexDatabase(this.open, this.options.indexPath, this.treeKey(), this.options.onWarning, this.options.busyTimeoutMs);
  }

  private treeKey(): string {
    return [this.options.sessionsDir, ...this.options.roots].join("\n");
  }

  private live(): void {
    if (this.closed) throw new TranscriptStoreError("INVALID_OPTION", "The index is closed");
  }

  /** Runs `fn`; a damaged index file found on the way is deleted, created anew and `fn` run again. */
  private guarded<T>(fn: () => T): T {
    this.live();
    try {
      return fn();
    } catch (err) {
      if (!isCorruptionError(err)) throw codedIndexError(err, this.options.indexPath);
      this.startOver(err);
      try {
        return fn();
      } catch (again) {
        throw codedIndexError(again, this.options.indexPath);
      }
    }
  }

  /** The index file is damaged: it is deleted with its WAL, created anew and said so (`INDEX_REBUILT`). */
  private startOver(err: unknown): void {
    this.options.onWarning({
      code: "INDEX_REBUILT",
      message: `The index file was damaged (${(err as Error).message}); it is rebuilt`,
      path: this.options.indexPath,
    });
    try {
      this.db.close();
    } catch {
      // a damaged database may not close cleanly; its files go next
    }
    removeIndexFiles(this.options.indexPath);
    this.db = this.openDatabase();
    this.statements = new Map();
    this.catchUp = new SessionCatchUp(this.db);
    this.knownFiles = new KnownFiles(this.db);
  }

  /** A prepared statement of this connection, kept (at most 64: the filter combinations are few). */
  private statement(sql: string): SqliteStatement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      if (this.statements.size >= 64) this.statements.clear();
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private paths(): string[] {
    return sessionFilePaths({ sessionsDir: this.options.sessionsDir, roots: this.options.roots, onWarning: this.options.onWarning });
  }

  async refresh(): Promise<IndexRefreshReport> {
    // one walk of the tree serves both the search rows and the listing rows
    const paths = this.guarded(() => this.paths());
    const report = this.guarded(() => this.refreshNow(paths));
    this.guarded(() => this.refreshListing(paths));
    this.guarded(() => this.eraseIfPending());
    return report;
  }

  /** Deleted texts leave no bytes in the index file (src/search/index-erasure.ts). */
  private eraseIfPending(): void {
    if (!this.erasePending) return;
    eraseDeleted(this.db);
    this.erasePending = false;
  }

  /**
   * Drops the rows of these session files, so the next refresh reads them again from their start:
   * for a change the files' stats do not show (redact scrubbed only their artifacts).
   */
  async forget(paths: readonly string[]): Promise<void> {
    this.guarded(() => {
      this.db.exec("BEGIN IMMEDIATE");
      try {
        for (const path of paths) this.catchUp.forgetPath(path);
        this.db.exec("COMMIT");
      } catch (err) {
        this.db.exec("ROLLBACK");
        throw err;
      }
      this.knownFiles.invalidate();
      this.erasePending = true;
    });
  }

  /** The listing rows (src/search/listing-cache.ts) of every session file, brought up to date with the search rows. */
  private refreshListing(paths: string[]): void {
    this.db.exec(LISTING_SCHEMA); // IF NOT EXISTS: an index made without them at this version gets them here
    new ListingCache(this.db).refresh(paths, Date.now());
  }

  /**
   * One pass of stats, outside any transaction; then, only if a file changed or went, one write
   * transaction catching those up (committing about every `batchBytes` read: one commit per file
   * would flush an FTS5 segment per file). Nothing changed: no transaction, no per-session work.
   */
  private refreshNow(paths: string[] = this.paths()): IndexRefreshReport {
    const report = emptyRefreshReport();
    const { changed, gone } = this.stale(report, paths);
    if (changed.length === 0 && gone.length === 0) return report;
    this.db.exec("BEGIN IMMEDIATE");
    try {
      this.catchUpFiles(changed, gone, report);
      this.db.exec("COMMIT");
    } catch (err) {
      this.knownFiles.invalidate();
      try {
        this.db.exec("ROLLBACK");
      } catch {
        // the failure ended the transaction already
      }
      throw err;
    }
    this.knownFiles.update([...changed, ...gone]);
    if (report.sessionsRemoved + report.sessionsReindexed > 0) this.erasePending = true;
    return report;
  }

  /** The files new or changed since indexed (or unreadable: catching up finds out) and the indexed ones gone. */
  private stale(report: IndexRefreshReport, paths: string[]): { changed: string[]; gone: string[] } {
    const known = this.knownFiles.get();
    const seen = new Set<string>();
    const changed: string[] = [];
    for (const path of paths) {
      seen.add(path);
      report.filesSeen++;
      const row = known.get(path);
      if (row !== undefined) {
        const st = statOf(path);
        if (st !== null && unchangedFile(row, st)) continue;
      }
      changed.push(path);
    }
    const gone: string[] = [];
    for (const path of known.keys()) if (!seen.has(path)) gone.push(path);
    return { changed, gone };
  }

  private catchUpFiles(changed: string[], gone: string[], report: IndexRefreshReport): void {
    let batch = 0;
    for (const [done, path] of changed.entries()) {
      this.options.onProgress?.({ filesDone: done, filesTotal: changed.length, path });
      if (batch >= this.options.batchBytes) {
        this.db.exec("COMMIT");
        this.db.exec("BEGIN IMMEDIATE");
        batch = 0;
      }
      const result = this.catchUp.run(path);
      batch += result.bytesRead + result.artifactBytesRead + 4096;
      if (result.outcome === "added") report.sessionsAdded++;
      else if (result.outcome === "updated") report.sessionsUpdated++;
      else if (result.outcome === "reindexed") report.sessionsReindexed++;
      else if (result.outcome === "removed") report.sessionsRemoved++;
      if (result.outcome === "reindexed" || result.outcome === "removed") this.dropListingRows(path);
      report.entriesIndexed += result.entries;
      report.bytesRead += result.bytesRead;
      report.headerBytesRead += result.headerBytesRead;
      report.artifactBytesRead += result.artifactBytesRead;
      report.malformedLines += result.malformedLines;
      report.largeLinesSkipped += result.largeLinesSkipped;
    }
    for (const path of gone) {
      if (this.catchUp.forgetPath(path)) report.sessionsRemoved++;
      this.dropListingRows(path);
    }
  }

  /** A rewritten or removed file's cached listing rows (its first message…) go with its texts; a listing reads it again. */
  private dropListingRows(path: string): void {
    this.db.exec(LISTING_SCHEMA); // IF NOT EXISTS: an index made without them at this version gets them here
    for (const table of LISTING_TABLES) this.statement(`DELETE FROM ${table} WHERE path = ?`).run(path);
  }

  async status(): Promise<IndexStatus> {
    return this.guarded(() => {
      const known = this.knownFiles.get();
      let sessionsBehind = 0;
      let bytesBehind = 0;
      const seen = new Set<string>();
      for (const path of this.paths()) {
        seen.add(path);
        const st = statOf(path);
        if (st === null) continue;
        const row = known.get(path);
        if (row !== undefined && unchangedFile(row, st)) continue;
        sessionsBehind++;
        const sameFile = row !== undefined && row.dev === st.dev && row.ino === st.ino && st.size >= row.offset;
        bytesBehind += sameFile ? st.size - row.offset : st.size;
      }
      let sessionsGone = 0;
      for (const path of known.keys()) if (!seen.has(path)) sessionsGone++;
      const count = (sql: string) => Number(this.db.prepare(sql).get()?.n ?? 0);
      return {
        location: this.options.indexPath,
        fresh: sessionsBehind === 0 && sessionsGone === 0,
        sessionsIndexed: count("SELECT count(*) AS n FROM sessions WHERE session_id IS NOT NULL"),
        entriesIndexed: count("SELECT count(*) AS n FROM entries"),
        sessionsBehind,
        bytesBehind,
        sessionsGone,
      };
    });
  }

  async rebuild(): Promise<IndexRefreshReport> {
    return this.guarded(() => {
      this.db.exec("BEGIN IMMEDIATE");
      try {
        for (const table of TEXT_TABLES) this.db.exec(`DELETE FROM ${table}`);
        this.db.exec("DELETE FROM entries; DELETE FROM sessions;");
        for (const table of LISTING_TABLES) this.db.exec(`DELETE FROM ${table}`);
        this.db.exec("COMMIT");
        this.knownFiles.invalidate();
        this.erasePending = true;
      } catch (err) {
        this.db.exec("ROLLBACK");
        throw err;
      }
      const paths = this.paths();
      const report = this.refreshNow(paths);
      this.refreshListing(paths);
      this.eraseIfPending();
      return report;
    });
  }

  async search(query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    const terms = parseQuery(query);
    const { where, params, limit, sort, now } = searchFilters(options);
    const stemmed = toStemmedMatch(terms);
    const quoted = terms.some((t) => t.kind === "phrase");
    const order = this.guarded(() => {
      if (options.refresh !== false) {
        this.refreshNow();
        this.eraseIfPending();
      }
      // BM25 scores every match (about 2.5 µs each): a term in most texts would cost seconds on a
      // large store, so past `maxRankedMatches` the newest matches come first (FTS5 walks its
      // doclist newest first and stops at the limit; only the hits returned are scored).
      const many = this.statement(COUNT_MATCHES_SQL).get(stemmed, this.options.maxRankedMatches + 1);
      return sort === "relevance" && Number(many?.n ?? 0) > this.options.maxRankedMatches ? "newest-indexed" : sort;
    });
    const shape = searchSql(where, order);
    // The index keeps no copy of the texts: each is read back from the entry's line (once per search),
    // for its snippet, and for a quoted phrase's exact form (the one table is stemmed)
    const readers = new Map<string, ArtifactReader>();
    const texts = new Map<number, string | null>();
    const textOf = (r: { id: number; path: string; entryId: string; role: string; lineOffset: number; lineLength: number }) => {
      if (!texts.has(r.id)) texts.set(r.id, readHitText(r, readers));
      return texts.get(r.id)!;
    };
    const rows = await distinctHits(
      (n) =>
        this.guarded(() => {
          const values = shape.params.flatMap((p) => (p === "match" ? [stemmed] : p === "now" ? [now] : p === "filters" ? params : [n]));
          const found = this.statement(shape.sql)
            .all(...values)
            .map((r) => ({
              id: Number(r.id),
              sessionId: String(r.session_id),
              entryId: String(r.entry_id),
              role: String(r.role),
              timestamp: String(r.ts),
              path: String(r.path),
              cwd: String(r.cwd),
              rank: Number(r.rank),
              tsMs: r.ts_ms === null ? null : Number(r.ts_ms),
              lineOffset: Number(r.line_offset),
              lineLength: Number(r.line_len),
            }));
          if (!quoted) return { rows: found, fetched: found.length };
          const exact = found.filter((r) => {
            const text = textOf(r);
            return text !== null && holdsExactForms(text, terms);
          });
          return { rows: exact, fetched: found.length };
        }),
      limit,
    );
    const titles = this.guarded(() => sessionTitles(this.db, [...new Set(rows.map((r) => r.path))], Date.now()));
    return rows.map((r) => {
      const hit = { path: r.path, entryId: r.entryId, role: r.role };
      const text = textOf(r);
      return {
        sessionId: r.sessionId,
        location: hit.path,
        entryId: hit.entryId,
        role: hit.role,
        timestamp: r.timestamp,
        snippet: text === null ? "" : makeSnippet(text, terms, HIGHLIGHT_START, HIGHLIGHT_END),
        score: order === "relevance" ? blendedScore(-r.rank, r.tsMs, now) : -r.rank,
        cwd: r.cwd,
        title: titles.get(hit.path) ?? "",
        alsoIn: r.alsoIn,
      };
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }
}

function statOf(path: string): Stats | null {
  try {
    return io.statSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}
