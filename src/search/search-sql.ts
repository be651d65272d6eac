/** The SQL counting a query's matches up to a bound (`?` the match, `?` the bound). */
export const COUNT_MATCHES_SQL = "SELECT count(*) AS n FROM (SELECT rowid FROM entries_text WHERE entries_text MATCH ? LIMIT ?)";

const COLUMNS = "s.session_id, s.path, s.cwd, e.entry_id, e.role, e.ts, e.ts_ms, e.line_offset, e.line_len, e.id";

/** Days over which a hit's relevance halves with age (the recency blend; docs/index.md, "Ranking"). @default 30 */
export const RECENCY_HALF_DAYS = 30;

/** The most relevant matches re-ordered by the recency blend when no filter joins them all. @default 200 */
export const BLEND_POOL = 200;

/** A hit's score under the recency blend (higher first): its relevance divided by `1 + age / 30 days`. */
export function blendedScore(relevance: number, tsMs: number | null, now: number): number {
  return relevance / (1 + Math.max(0, now - (tsMs ?? now)) / (RECENCY_HALF_DAYS * 86_400_000));
}

/** How a search orders its hits. */
export type SearchOrder = "relevance" | "recent" | "newest-indexed";

/**
 * The blended score (lower first, as FTS5's `rank`): BM25 relevance divided by `1 + age / 30 days`,
 * the age counted from `?` (now, in ms). An entry a month old needs twice the relevance of one
 * written now to rank above it; one without a time counts as written now.
 */
const BLENDED = `(rank / (1.0 + max(0, ? - coalesce(e.ts_ms, ?)) / ${RECENCY_HALF_DAYS * 86_400_000}.0))`;

/**
 * The SQL of a search (pure) and the order of its parameters: `match` (the MATCH), `now` (twice,
 * for the blend), `filters` (the filters' own),
 * `limit`. Without filters, FTS5 ranks and cuts on its own (the best `BLEND_POOL`, or the newest
 * indexed for a query matching more than the ranked bound) and only those are joined to their rows
 * (joining every match first cost about twice the ranking itself); with filters or `recent`, every
 * match is joined so that the filters apply before the limit.
 */
export function searchSql(
  where: readonly string[],
  order: SearchOrder,
): { sql: string; params: ("match" | "now" | "filters" | "limit")[] } {
  if (where.length === 0 && order !== "recent") {
    const inner = order === "newest-indexed" ? "rowid DESC" : "rank";
    const outer = order === "newest-indexed" ? "t.rowid DESC" : `${BLENDED.replaceAll("rank", "t.rank")}, e.id`;
    const pool = order === "newest-indexed" ? "?" : `max(?, ${BLEND_POOL})`;
    return {
      sql: `SELECT ${COLUMNS}, t.rank AS rank
      FROM (SELECT rowid, rank FROM entries_text WHERE entries_text MATCH ? ORDER BY ${inner} LIMIT ${pool}) t
      JOIN entries e ON e.id = t.rowid JOIN sessions s ON s.sid = e.sid
      ORDER BY ${outer} LIMIT ?`,
      params: ["match", "limit", ...(order === "relevance" ? (["now", "now"] as const) : []), "limit"],
    };
  }
  const sort =
    order === "recent"
      ? "e.ts_ms DESC NULLS LAST, e.id DESC"
      : order === "newest-indexed"
        ? "entries_text.rowid DESC"
        : `${BLENDED.replace("rank", "entries_text.rank")}, e.id`;
  return {
    sql: `SELECT ${COLUMNS}, entries_text.rank AS rank
    FROM entries_text JOIN entries e ON e.id = entries_text.rowid JOIN sessions s ON s.sid = e.sid
    WHERE entries_text MATCH ? ${where.map((w) => `AND ${w}`).join(" ")}
    ORDER BY ${sort} LIMIT ?`,
    params: ["match", "filters", ...(order === "relevance" ? (["now", "now"] as const) : []), "limit"],
  };
}
