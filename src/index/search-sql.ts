/** The SQL counting a query's matches up to a bound (`?` the match, `?` the bound). */
export const COUNT_MATCHES_SQL = "SELECT count(*) AS n FROM (SELECT rowid FROM entries_text WHERE entries_text MATCH ? LIMIT ?)";

const COLUMNS = "s.session_id, s.path, s.cwd, e.entry_id, e.role, e.ts, e.line_offset, e.line_len";

/**
 * The SQL of a search (pure): parameters are the match, then the filters' own, then the limit.
 * Without filters, FTS5 ranks and cuts at the limit on its own and only the hits returned are
 * joined to their rows (joining every match first cost about twice the ranking itself); with
 * filters, every match is joined so that the filters apply before the limit.
 */
export function searchSql(where: readonly string[], byRecency: boolean): string {
  if (where.length === 0) {
    const order = byRecency ? "rowid DESC" : "rank";
    return `SELECT ${COLUMNS}, t.rank AS rank
      FROM (SELECT rowid, bm25(entries_text) AS rank FROM entries_text WHERE entries_text MATCH ? ORDER BY ${order} LIMIT ?) t
      JOIN entries e ON e.id = t.rowid JOIN sessions s ON s.sid = e.sid
      ORDER BY ${byRecency ? "t.rowid DESC" : "t.rank"}`;
  }
  return `SELECT ${COLUMNS}, bm25(entries_text) AS rank
    FROM entries_text JOIN entries e ON e.id = entries_text.rowid JOIN sessions s ON s.sid = e.sid
    WHERE entries_text MATCH ? ${where.map((w) => `AND ${w}`).join(" ")}
    ORDER BY ${byRecency ? "entries_text.rowid DESC" : "rank"} LIMIT ?`;
}
