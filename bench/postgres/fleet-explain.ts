// EXPLAIN (ANALYZE, BUFFERS) of the statements behind the fleet bench's reads, with the parameters
// the library sends: what docs/postgres.md ("Plans at fleet scale") shows.
import type pg from "pg";
import { FRESH_SINCE_SQL, FRESH_SQL } from "../../src/storage/postgres/db/search-index.ts";
import { compileQuery, parseQuery, SEARCH_SETTINGS, SEARCH_SQL, searchParams } from "../../src/storage/postgres/db/search-query.ts";
import { INFO_COLUMNS } from "../../src/storage/postgres/db/rows.ts";
import { resolveSearchOptions } from "../../src/storage/postgres/pg-index.ts";
import { PAGE, PROBE } from "./fleet-ops.ts";
import { fleetCwd, fleetId, fleetToken } from "./fleet-seed.ts";

/** The gc candidate statement of a dry run (src/storage/postgres/db/gc.ts), with the default grace of one hour. */
const GC_DRY_RUN = `SELECT c.sha256, b.size::float8 AS size FROM (SELECT b.sha256 FROM blobs b
  WHERE b.touched < now() - $1 * interval '1 millisecond'
    AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.sha256 = b.sha256)) c JOIN blobs b USING (sha256) ORDER BY c.sha256`;

/** The statements, each with its parameters. */
export async function fleetStatements(raw: pg.Pool): Promise<Array<{ name: string; sql: string; params: unknown[]; settings?: string }>> {
  const probe = fleetId(PROBE);
  const search = async (q: string) => searchParams(await compileQuery(raw, parseQuery(q)), resolveSearchOptions({ limit: 20 }));
  const mark = (await raw.query<{ mark: string }>("SELECT mark::text AS mark FROM search_mark")).rows[0]?.mark ?? "0";
  return [
    { name: "open: the session row", sql: `SELECT ${INFO_COLUMNS}, header FROM sessions WHERE id = $1`, params: [probe] },
    {
      name: "open: the entries (the cursor's statement)",
      sql: `SELECT seq::float8 AS seq, entry_id, kind, line FROM entries WHERE session_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq`,
      params: [probe, 1, Number.MAX_SAFE_INTEGER],
    },
    {
      name: "list one cwd",
      sql: `SELECT ${INFO_COLUMNS} FROM sessions WHERE md5(cwd) = md5($2) AND cwd = $2 ORDER BY modified DESC, id DESC LIMIT $1`,
      params: [null, fleetCwd(PROBE)],
    },
    {
      name: `list all, first ${PAGE}`,
      sql: `SELECT ${INFO_COLUMNS} FROM sessions ORDER BY modified DESC, id DESC LIMIT $1`,
      params: [PAGE],
    },
    { name: "list all", sql: `SELECT ${INFO_COLUMNS} FROM sessions ORDER BY modified DESC, id DESC LIMIT $1`, params: [null] },
    {
      name: "session name (the listing's session_info subquery, alone)",
      sql: "SELECT e.line FROM entries e WHERE e.session_id = $1 AND e.kind = 'session_info' ORDER BY e.seq DESC LIMIT 1",
      params: [probe],
    },
    {
      name: "resolve an id prefix",
      sql: `SELECT ${INFO_COLUMNS} FROM sessions WHERE id LIKE $1 || '%' AND ($2::text IS NULL OR cwd = $2)
             ORDER BY (id = $3) DESC, id LIMIT 2`,
      params: [probe.slice(0, 8), null, probe.slice(0, 8)],
    },
    { name: "gc dry run: the candidates", sql: GC_DRY_RUN, params: [3_600_000] },
    {
      name: "search: the freshness check it runs first (the index fresh, with the mark its refresh left)",
      sql: FRESH_SINCE_SQL,
      params: [mark],
    },
    {
      name: "search: the freshness check of an index without a mark (made anew; the first refresh leaves one)",
      sql: FRESH_SQL,
      params: [],
    },
    // in a transaction with the settings the library's search sets (src/storage/postgres/db/search-query.ts)
    { name: "search one session's word", sql: SEARCH_SQL, params: await search(fleetToken(PROBE)), settings: SEARCH_SETTINGS },
    { name: "search a word of every session", sql: SEARCH_SQL, params: await search("assertion"), settings: SEARCH_SETTINGS },
  ];
}

/** Each statement's plan, as text. */
export async function explainFleet(raw: pg.Pool): Promise<string> {
  const out: string[] = [];
  for (const { name, sql, params, settings } of await fleetStatements(raw)) {
    const client = await raw.connect();
    let rows: Array<Record<string, string>>;
    try {
      await client.query("BEGIN");
      if (settings !== undefined) await client.query(settings);
      rows = (await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params)).rows;
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    out.push(`-- ${name}`, ...rows.map((r: Record<string, string>) => r["QUERY PLAN"]!), "");
  }
  return out.join("\n");
}
