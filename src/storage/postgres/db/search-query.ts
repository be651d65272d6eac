import type { Pool, PoolClient } from "./pg-client.ts";
import { TranscriptStoreError } from "../../../errors.ts";
import { SEARCH_ROLES } from "./search-text.ts";
import { withClient, withTransaction } from "./transaction.ts";
import { splitIdentifier } from "../../../search/word-forms.ts";
import { RECENCY_HALF_DAYS } from "../../../search/search-sql.ts";

/** The longest query accepted (characters). */
export const MAX_QUERY_CHARS = 1000;
/** Hits returned unless `limit` says otherwise, and the most it may say. */
export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 1000;
/** What marks a matched word in a snippet. */
export const SNIPPET_START = "«";
export const SNIPPET_STOP = "»";
/** Characters of a snippet at most (a long word is cut). */
export const MAX_SNIPPET_CHARS = 400;

/** One term of a query: a word, a "quoted phrase", or a prefix (`word*`). */
export interface QueryTerm {
  kind: "word" | "phrase" | "prefix";
  text: string;
}

/**
 * The terms of `query`, all of which a hit must match: whitespace separates words, `"…"` quotes a
 * phrase, a trailing `*` makes a word a prefix. Nothing else is syntax: tsquery operators, quotes
 * inside words, backslashes are text (the database's parser splits words as it splits entries).
 * INVALID_QUERY: not a string, empty, longer than MAX_QUERY_CHARS, an unclosed `"`, or a NUL.
 */
export function parseQuery(query: unknown): QueryTerm[] {
  if (typeof query !== "string") throw new TranscriptStoreError("INVALID_QUERY", "A search query is a string");
  if (query.length > MAX_QUERY_CHARS)
    throw new TranscriptStoreError("INVALID_QUERY", `A search query holds at most ${MAX_QUERY_CHARS} characters`);
  if (query.includes("\u0000")) throw new TranscriptStoreError("INVALID_QUERY", "A search query cannot hold a NUL character");
  const terms: QueryTerm[] = [];
  let i = 0;
  while (i < query.length) {
    const c = query[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"') {
      const end = query.indexOf('"', i + 1);
      if (end < 0) throw new TranscriptStoreError("INVALID_QUERY", `Unclosed quote at character ${i + 1} of the search query`);
      const text = query.slice(i + 1, end).trim();
      if (text.length > 0) terms.push({ kind: "phrase", text });
      i = end + 1;
    } else {
      let end = i;
      while (end < query.length && !/\s/.test(query[end]!) && query[end] !== '"') end++;
      const word = query.slice(i, end);
      const stem = word.replace(/\*+$/, "");
      if (stem.length > 0) terms.push({ kind: stem.length < word.length ? "prefix" : "word", text: stem });
      i = end;
    }
  }
  if (terms.length === 0) throw new TranscriptStoreError("INVALID_QUERY", "The search query has no words");
  return terms;
}

/** A word or prefix as the words of its identifier parts (`parseStatement` → `parse Statement`), as the index splits them. */
function partsOf(text: string): string {
  return text
    .split(/\s+/u)
    .flatMap((w) => splitIdentifier(w))
    .join(" ");
}

/**
 * The tsquery of `terms`, made by the database from bound parameters (never text spliced into SQL
 * or into tsquery syntax): each term through phraseto_tsquery('ts_words', …) (as the phrase of its
 * identifier parts, stemmed, as the index splits and stems; exactPatterns keeps a quoted one exact),
 * a prefix marked `:*` on the last lexeme of
 * the tsquery PostgreSQL itself printed, all ANDed. Returned in tsquery's text form. INVALID_QUERY
 * when no term holds a searchable word.
 */
export async function compileQuery(pool: Pool, terms: readonly QueryTerm[]): Promise<string> {
  const { rows } = await withClient(pool, "Compiling a search query", (client) =>
    client.query<{ query: string }>(
      `WITH parts AS (
         SELECT u.kind, phraseto_tsquery('ts_words', u.text) AS q
           FROM unnest($1::text[], $2::text[]) AS u (kind, text)
       )
       SELECT COALESCE(string_agg('(' || CASE WHEN kind = 'prefix' THEN q::text || ':*' ELSE q::text END || ')', ' & '), '') AS query
         FROM parts WHERE numnode(q) > 0`,
      [terms.map((t) => t.kind), terms.map((t) => partsOf(t.text))],
    ),
  );
  const query = rows[0]!.query;
  if (query === "") throw new TranscriptStoreError("INVALID_QUERY", "The search query has no searchable words");
  return query;
}

/**
 * The exact forms a hit's text must hold, as PostgreSQL regular expressions (null: none): each quoted
 * phrase's words as written, whole words (bounded by what is no letter or digit: `_` too, as FTS5's
 * tokenizer splits at it), any case, separated by anything that is no letter or digit.
 * The stemmed tsquery finds the candidates; this keeps `"crashes"` from matching "crash".
 */
export function exactPatterns(terms: readonly QueryTerm[]): string[] | null {
  const out: string[] = [];
  for (const t of terms) {
    if (t.kind !== "phrase") continue;
    const words = Array.from(t.text.matchAll(/[\p{L}\p{N}]+/gu), (m) => m[0].replace(/[^\p{L}\p{N}]/gu, ""));
    if (words.length > 0) out.push(`(^|[^[:alnum:]])${words.join("[^[:alnum:]]+")}([^[:alnum:]]|$)`);
  }
  return out.length === 0 ? null : out;
}

/** Filters of a search, checked. */
export interface PgSearchFilters {
  cwd: string | null;
  since: Date | null;
  until: Date | null;
  roles: string[] | null;
  model: string | null;
  session: string | null;
  limit: number;
  /** `recent`: newest first; else relevance blended with recency. */
  sort: "relevance" | "recent";
  /** The time the recency blend counts ages from (null: the statement's). */
  now: Date | null;
  /** exactPatterns of the query. */
  exact: string[] | null;
}

/** One row of a search. */
export interface PgSearchRow {
  sessionId: string;
  entryId: string;
  role: string;
  timestamp: string;
  snippet: string;
  score: number;
  cwd: string;
  title: string;
}

const HEADLINE = `StartSel=${SNIPPET_START}, StopSel=${SNIPPET_STOP}, MaxWords=30, MinWords=10, MaxFragments=2, FragmentDelimiter=" … "`;

/**
 * The search statement: hits of `$1` (compileQuery's tsquery) ranked by ts_rank (normalized by
 * length) divided by `1 + age / 30 days` (the file tree's recency blend), or newest first when `$11`
 * is `recent`; a quoted phrase's exact form checked on the text (`$10`, exactPatterns); the
 * filters in the same statement ($2 … $7, null: none; the model
 * is matched as a substring in any case, the session as an id or id prefix, as the file tree's
 * index does); snippets (ts_headline, $9) only for the `$8` hits returned. docs/postgres.md shows its plan.
 * The ranked part reads `sessions` only for a cwd ($2: its rows through `sessions_cwd_modified`):
 * joined for every hit, a rare word's 0.5 % estimate made the planner merge-join the hits with the
 * whole id index. The outer join drops a hit of a session deleted since the refresh that precedes
 * every search (then fewer than $8 hits may come back, as they may when a row is deleted anyway).
 * A session in the trash (`session_lifecycle.trashed_at`) is never a hit: `rm` hides it at once, `restore`
 * brings it back, `purge` deletes its rows (and the next refresh its index rows).
 */
export const SEARCH_SQL = `
  SELECT r.session_id AS "sessionId", COALESCE(e.entry_id, '') AS "entryId", r.role, COALESCE(e.timestamp, '') AS timestamp,
         ts_headline('ts_words', ts_identifier_parts(e.body), $1::tsquery, $9) AS snippet, r.score::float8 AS score, s.cwd,
         COALESCE(s.title, s.first_message, '') AS title
    FROM (SELECT e.session_id, e.seq, e.role, e.part, e.at,
                 ts_rank(e.doc, $1::tsquery, 1)
                   / (1 + greatest(0, extract(epoch FROM COALESCE($12::timestamptz, now()) - COALESCE(e.at, $12::timestamptz, now())))
                        / ${RECENCY_HALF_DAYS * 86_400}.0) AS score
            FROM search_entries e
           WHERE e.doc @@ $1::tsquery
             AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = e.session_id AND md5(s.cwd) = md5($2) AND s.cwd = $2))
             AND ($3::timestamptz IS NULL OR e.at >= $3)
             AND ($4::timestamptz IS NULL OR e.at <= $4) AND ($5::text[] IS NULL OR e.role = ANY ($5))
             AND ($6::text IS NULL OR strpos(lower(e.model), lower($6)) > 0)
             AND ($7::text IS NULL OR left(e.session_id, length($7)) = $7)
             AND NOT EXISTS (SELECT 1 FROM session_lifecycle l WHERE l.session_id = e.session_id AND l.trashed_at IS NOT NULL)
             AND ($10::text[] IS NULL OR NOT EXISTS (SELECT 1 FROM unnest($10::text[]) p WHERE e.body !~* p))
           ORDER BY CASE WHEN $11 = 'recent' THEN e.at END DESC NULLS LAST, score DESC, e.at DESC NULLS LAST,
                    e.session_id, e.seq, e.role, e.part
           LIMIT $8) r
    JOIN search_entries e ON e.session_id = r.session_id AND e.seq = r.seq AND e.role = r.role AND e.part = r.part
    JOIN sessions s ON s.id = r.session_id
   ORDER BY CASE WHEN $11 = 'recent' THEN r.at END DESC NULLS LAST, r.score DESC, r.at DESC NULLS LAST,
            r.session_id, r.seq, r.role, r.part`;

/** The parameters of SEARCH_SQL. */
export function searchParams(tsquery: string, f: PgSearchFilters): unknown[] {
  return [tsquery, f.cwd, f.since, f.until, f.roles, f.model, f.session, f.limit, HEADLINE, f.exact, f.sort, f.now];
}

/** What the search statement's transaction sets first (runSearchStatement says why). */
export const SEARCH_SETTINGS = "SET LOCAL max_parallel_workers_per_gather = 0";

/**
 * Runs SEARCH_SQL (after `prefix`, an EXPLAIN in the plan test) on `client`, which must be in a
 * transaction: no parallel workers for it. PostgreSQL estimates a word absent from the column's
 * most-common-element statistics at 0.5 % of the rows (its default tsvector selectivity): at
 * 1.2 million rows 6,000 for a word in one row, and it then starts a Gather Merge whose workers
 * cost ~100 ms to read one row the GIN index gives in 0.1 ms (docs/postgres.md, "Plans at fleet
 * scale"). The estimate cannot tell a rare word from a common one, so the setting is per search,
 * not per word; a word in most rows is read serially (the same work, on one core).
 */
export async function runSearchStatement<R extends object>(client: PoolClient, tsquery: string, f: PgSearchFilters, prefix = "") {
  await client.query(SEARCH_SETTINGS);
  return client.query<R>(`${prefix}${SEARCH_SQL}`, searchParams(tsquery, f));
}

/** The hits of `tsquery` under the filters `f`, snippets with whitespace collapsed and cut to MAX_SNIPPET_CHARS. */
export async function searchEntries(pool: Pool, tsquery: string, f: PgSearchFilters): Promise<PgSearchRow[]> {
  const { rows } = await withTransaction(pool, "Searching the index", (client) => runSearchStatement<PgSearchRow>(client, tsquery, f));
  for (const row of rows) {
    row.snippet = row.snippet.replace(/\s+/g, " ").trim();
    if (row.snippet.length > MAX_SNIPPET_CHARS) {
      const end = /[\ud800-\udbff]/.test(row.snippet[MAX_SNIPPET_CHARS - 1]!) ? MAX_SNIPPET_CHARS - 1 : MAX_SNIPPET_CHARS;
      row.snippet = `${row.snippet.slice(0, end)}…`;
    }
  }
  return rows;
}

/** The roles a search may filter on. */
export const SEARCHABLE_ROLES: readonly string[] = SEARCH_ROLES;
