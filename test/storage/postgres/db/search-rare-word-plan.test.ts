import { describe, expect, it } from "vitest";
import { runSearchStatement, SEARCH_SQL, searchParams } from "../../../../src/storage/postgres/db/search-query.ts";
import { freshStore, rawPool } from "../../../support/pg-sessions.ts";
import { nodesOf, type PlanNode } from "../../../support/pg-plans.ts";
import { pgCluster } from "../../../support/postgres.ts";

const SESSIONS = 100_000;
const ENTRIES = 12;

const FILTERS = {
  cwd: null,
  since: null,
  until: null,
  roles: null,
  model: null,
  session: null,
  limit: 20,
  sort: "relevance" as const,
  exact: null,
  now: null,
};

// Skipped only where no PostgreSQL can start: one loud SKIPPED line, and under CI=true a failed run instead (support/pg-global-setup.ts).
describe.skipIf(!pgCluster())("PostgreSQL search: the plan of a rare word at fleet scale", () => {
  it("reads a rare word's one row through the GIN index, no parallel workers (1,200,000 rows of four template texts)", async () => {
    const { url } = await freshStore();
    const db = rawPool(url);
    await db.query(
      `INSERT INTO sessions (id, cwd, created, header, first_message, last_seq)
       SELECT md5('rare' || g)::uuid::text, '/rare/project-' || g / 100, now(), repeat('h', 180), repeat('m', 40), $2::int
         FROM generate_series(1, $1::int) g`,
      [SESSIONS, ENTRIES],
    );
    // as the fleet bench's generated sessions: four texts repeated, so every word is common but one
    await db.query(
      `INSERT INTO search_entries (session_id, seq, role, entry_id, at, timestamp, body)
       SELECT md5('rare' || g)::uuid::text, k, 'user', 'e' || k, now(), '', (ARRAY[
           'please read the configuration file and tell me which options the build uses for release mode',
           'the build failed on the linker step because a symbol is missing from the library archive',
           'run the test suite again after the fix and report the failing cases with their messages',
           'refactor the parser so that errors carry the line and column where the input went wrong'])[1 + (g + k) % 4]
         FROM generate_series(1, $1::int) g, generate_series(1, $2::int) k`,
      [SESSIONS, ENTRIES],
    );
    await db.query("UPDATE search_entries SET body = body || ' zanzibarite' WHERE session_id = md5('rare' || 777)::uuid::text AND seq = 3");
    await db.query("VACUUM ANALYZE search_entries, sessions");
    // the statement as searchEntries runs it (its transaction, its settings), explained
    const plan = async (query: string, cwd: string | null = null) => {
      const client = await db.connect();
      try {
        await client.query("BEGIN");
        const { rows } = await runSearchStatement<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(
          client,
          query,
          { ...FILTERS, cwd },
          "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ",
        );
        await client.query("ROLLBACK");
        return nodesOf(rows[0]!["QUERY PLAN"][0]!.Plan);
      } finally {
        client.release();
      }
    };
    const gathers = (nodes: PlanNode[]) => nodes.filter((n) => n["Node Type"].startsWith("Gather")).map((n) => n["Node Type"]);
    /** Buffers the whole plan read (the top node counts its children's). */
    const buffers = (nodes: PlanNode[]) => (nodes[0]!["Shared Hit Blocks"] ?? 0) + (nodes[0]!["Shared Read Blocks"] ?? 0);
    const rare = await plan("'zanzibarite'");
    expect(gathers(rare)).toEqual([]);
    expect(rare.some((n) => n["Index Name"] === "search_entries_doc")).toBe(true);
    // the hit, its row and its session: a few pages (the statement joined sessions first: a merge join read its id index up to
    // the hit's id, 201 pages here)
    expect(buffers(rare)).toBeLessThan(50);
    // with a cwd: the 100 sessions of that cwd through sessions_cwd_modified, not a scan of sessions
    const inCwd = await plan("'zanzibarite'", "/rare/project-7");
    expect(inCwd.filter((n) => n["Relation Name"] === "sessions" && n["Node Type"] === "Seq Scan")).toEqual([]);
    expect(buffers(inCwd)).toBeLessThan(200);
    // the setting holds whatever the estimate (0.5 % of the rows: it grows with the table): a word in half the rows, for which the
    // statement alone plans a Gather (parallel plans made cheaper still), is planned without one as searchEntries runs it
    const client = await db.connect();
    try {
      await client.query("SET parallel_setup_cost = 0");
      await client.query("SET parallel_tuple_cost = 0");
      await client.query("SET min_parallel_table_scan_size = 0");
      const explain = "EXPLAIN (FORMAT JSON) ";
      const alone = (await client.query(`${explain}${SEARCH_SQL}`, searchParams("'build'", FILTERS))).rows;
      expect(gathers(nodesOf(alone[0]!["QUERY PLAN"][0]!.Plan as PlanNode)).length).toBeGreaterThan(0);
      await client.query("BEGIN");
      const { rows } = await runSearchStatement<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(client, "'build'", FILTERS, explain);
      await client.query("ROLLBACK");
      expect(gathers(nodesOf(rows[0]!["QUERY PLAN"][0]!.Plan))).toEqual([]);
    } finally {
      client.release(true);
    }
  }, 120_000);
});
