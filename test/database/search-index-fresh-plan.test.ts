import { describe, expect, it } from "vitest";
import { FRESH_SQL } from "../../src/database/search-index.ts";
import { freshStore, rawPool } from "../support/pg-sessions.ts";
import { pgCluster } from "../support/postgres.ts";

const SESSIONS = 10_000;

interface PlanNode {
  "Node Type": string;
  "Actual Loops": number;
  "Relation Name"?: string;
  Plans?: PlanNode[];
}

/** Every node of a JSON plan. */
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

describe.skipIf(!pgCluster())("PostgreSQL search index: the freshness check every search runs first", () => {
  it("reads each table once, never probing the index once per session (10,000 sessions, index fresh, statistics fresh)", async () => {
    const { url } = await freshStore();
    const db = rawPool(url);
    await db.query(
      // as a fleet grown by a few large transactions has them: few generations, sessions of like length
      `INSERT INTO sessions (id, cwd, created, header, first_message, last_seq, generation)
       SELECT md5('fresh' || g)::uuid::text, '/fresh/project-' || g / 100, now(), repeat('h', 180), repeat('m', 40), 12, 1000 + g / 5000
         FROM generate_series(1, $1::int) g`,
      [SESSIONS],
    );
    // the index as a refresh leaves it: every session at its mark (the check reads only these columns)
    await db.query("INSERT INTO search_sessions (session_id, generation, indexed_seq) SELECT id, generation, last_seq FROM sessions");
    await db.query("ANALYZE sessions, search_sessions");
    const behind = async () => (await db.query<{ behind: boolean }>(FRESH_SQL)).rows[0]!.behind;
    expect(await behind()).toBe(false);
    const { rows } = await db.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${FRESH_SQL}`);
    const nodes = nodesOf(rows[0]!["QUERY PLAN"][0]!.Plan);
    const probes = nodes
      .filter((n) => n["Actual Loops"] >= 100)
      .map((n) => `${n["Node Type"]} ${n["Relation Name"] ?? ""} ×${n["Actual Loops"]}`);
    expect(probes).toEqual([]);
    for (const table of ["sessions", "search_sessions"]) {
      expect(nodes.filter((n) => n["Relation Name"] === table).length, table).toBeGreaterThan(0);
    }
  });

  it("answers behind for each way a session leaves its mark: new, grown, rewritten, deleted", async () => {
    const { url } = await freshStore();
    const db = rawPool(url);
    await db.query(
      "INSERT INTO sessions (id, cwd, created, header, last_seq) SELECT 's' || g, '/f', now(), '{}', 3 FROM generate_series(1, 4) g",
    );
    const mark = () =>
      db.query("INSERT INTO search_sessions (session_id, generation, indexed_seq) SELECT id, generation, last_seq FROM sessions");
    await mark();
    const behind = async () => (await db.query<{ behind: boolean }>(FRESH_SQL)).rows[0]!.behind;
    expect(await behind()).toBe(false);
    const cases: Array<[string, string, string]> = [
      ["new", "INSERT INTO sessions (id, cwd, created, header) VALUES ('s5', '/f', now(), '{}')", "DELETE FROM sessions WHERE id = 's5'"],
      ["grown", "UPDATE sessions SET last_seq = 4 WHERE id = 's1'", "UPDATE sessions SET last_seq = 3 WHERE id = 's1'"],
      [
        "rewritten",
        "UPDATE sessions SET generation = generation + 1 WHERE id = 's2'",
        "UPDATE sessions SET generation = generation - 1 WHERE id = 's2'",
      ],
      [
        "deleted",
        "DELETE FROM sessions WHERE id = 's3'",
        `INSERT INTO sessions (id, cwd, created, header, last_seq, generation)
         SELECT 's3', '/f', now(), '{}', 3, generation FROM search_sessions WHERE session_id = 's3'`,
      ],
    ];
    for (const [what, change, undo] of cases) {
      await db.query(change);
      expect(await behind(), what).toBe(true);
      await db.query(undo);
      expect(await behind(), `${what}, undone`).toBe(false);
    }
  });
});
