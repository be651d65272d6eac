import { resolveRecordedCwd } from "../../session/paths.ts";
import type { Pool } from "./db/pg-client.ts";
import { TranscriptStoreError } from "../../errors.ts";
import type { SearchHit, SearchOptions, SessionIndex } from "../../search/index-types.ts";
import { distinctHits, hitTitle } from "../../search/hit-copies.ts";
import {
  ensureSearchTables,
  type PgIndexRefreshReport,
  type PgIndexStatus,
  rebuildSearchIndex,
  refreshSearchIndex,
  searchIndexStatus,
} from "./db/search-index.ts";
import {
  compileQuery,
  DEFAULT_SEARCH_LIMIT,
  exactPatterns,
  MAX_SEARCH_LIMIT,
  parseQuery,
  type PgSearchFilters,
  SEARCHABLE_ROLES,
  searchEntries,
} from "./db/search-query.ts";

/** How the backend opens its index. */
export interface PgSessionIndexOptions {
  /** A `migrate: "check"` store: no DDL (missing tables are INDEX_UNAVAILABLE). */
  readOnly: boolean;
  /** The backend's name (a redacted URL): a hit's location is `<name>#<session id>`. */
  name: string;
}

/** The `sort` option checked (INVALID_OPTION). */
function searchSort(sort: unknown): "relevance" | "recent" {
  if (sort === undefined) return "relevance";
  if (sort !== "relevance" && sort !== "recent") throw new TranscriptStoreError("INVALID_OPTION", 'sort must be "relevance" or "recent"');
  return sort;
}

const isDate = (d: unknown): d is Date => d instanceof Date && !Number.isNaN(d.getTime());

/** `options` checked (INVALID_OPTION, one message per bad value), defaults applied. */
export function resolveSearchOptions(options: SearchOptions = {}): PgSearchFilters {
  const bad = (what: string) => new TranscriptStoreError("INVALID_OPTION", what);
  const text = (name: string, v: unknown): string | null => {
    if (v === undefined) return null;
    if (typeof v !== "string" || v.length === 0 || v.includes("\u0000")) throw bad(`${name} must be a non-empty string without NUL`);
    return v;
  };
  for (const name of ["since", "until", "now"] as const) {
    if (options[name] !== undefined && !isDate(options[name])) throw bad(`${name} must be a valid Date`);
  }
  if (options.roles !== undefined) {
    if (!Array.isArray(options.roles) || options.roles.length === 0)
      throw bad(`roles must be a non-empty array of ${SEARCHABLE_ROLES.join(", ")}`);
    for (const role of options.roles)
      if (!SEARCHABLE_ROLES.includes(role)) throw bad(`roles: ${JSON.stringify(role)} is not one of ${SEARCHABLE_ROLES.join(", ")}`);
  }
  if (options.refresh !== undefined && typeof options.refresh !== "boolean") throw bad("refresh must be a boolean");
  const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT)
    throw bad(`limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}`);
  const cwd = text("cwd", options.cwd);
  return {
    cwd: cwd === null ? null : resolveRecordedCwd(cwd),
    since: options.since ?? null,
    until: options.until ?? null,
    roles: options.roles ?? null,
    model: text("model", options.model),
    session: text("session", options.session),
    limit,
    sort: searchSort(options.sort),
    now: options.now ?? null,
    exact: null,
  };
}

/**
 * The search index of a PostgreSQL store (docs/postgres.md, "Search index"): tables in the same
 * database, derived from the entry rows and filled on read. `search` refreshes first, so it answers
 * for every row committed before it was called. The pool is the store's: `close` ends nothing.
 * Its reports and status carry the fields of both declarations of `IndexRefreshReport` and
 * `IndexStatus` (the brief's and the file tree index's), so it is a `SessionIndex` of either.
 */
export class PgSessionIndex implements SessionIndex {
  private closed = false;

  private constructor(
    private readonly pool: Pool,
    private readonly options: PgSessionIndexOptions,
  ) {}

  /** The index of the store behind `pool`; creates its tables when they were dropped (unless read-only). */
  static async open(pool: Pool, options: PgSessionIndexOptions): Promise<PgSessionIndex> {
    await ensureSearchTables(pool, options.readOnly);
    return new PgSessionIndex(pool, options);
  }

  private check(): void {
    // as the file tree's index: work on a closed index is a misuse of the API
    if (this.closed) throw new TranscriptStoreError("INVALID_OPTION", "The search index was closed");
  }

  async refresh(): Promise<PgIndexRefreshReport> {
    this.check();
    await ensureSearchTables(this.pool, this.options.readOnly);
    return refreshSearchIndex(this.pool);
  }

  async search(query: string, options?: SearchOptions): Promise<SearchHit[]> {
    this.check();
    const terms = parseQuery(query);
    const filters = { ...resolveSearchOptions(options), exact: exactPatterns(terms) };
    const tsquery = await compileQuery(this.pool, terms);
    if (options?.refresh !== false) await this.refresh();
    const rows = await distinctHits(
      async (n) => {
        const found = await searchEntries(this.pool, tsquery, { ...filters, limit: n });
        return { rows: found, fetched: found.length };
      },
      filters.limit,
      MAX_SEARCH_LIMIT,
    );
    return rows.map((r) => ({ ...r, title: hitTitle(r.title), location: `${this.options.name}#${r.sessionId}` }));
  }

  async status(): Promise<PgIndexStatus & { location: string }> {
    this.check();
    return { location: this.options.name, ...(await searchIndexStatus(this.pool)) };
  }

  async rebuild(): Promise<PgIndexRefreshReport> {
    this.check();
    return rebuildSearchIndex(this.pool, this.options.readOnly);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
