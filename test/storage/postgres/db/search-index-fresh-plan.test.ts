import { describe, expect, it } from "vitest";
import { FRESH_SINCE_SQL, FRESH_SQL } from "../../../../src/storage/postgres/db/search-index.ts";
import { message, openIndex, session } from "../../../support/pg-search.ts";
import { freshStore, rawPool } from "../../../support/pg-sessions.ts";
import { MARK_NOW, nodesOf, type PlanNode, rowsRead } from "../../../support/pg-plans.ts";
import { pgCluster } from "../../../support/postgres.ts";

const SESSIONS = 10_000;

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
      .filter((n) => (n["Actual Loops"] ?? 0) >= 100)
      .map((n) => `${n["Node Type"]} ${n["Relation Name"] ?? ""} ×${n["Actual Loops"]}`);
    expect(probes).toEqual([]);
    for (const table of ["sessions", "search_sessions"]) {
      expect(nodes.filter((n) => n["Relation Name"] === table).length, table).toBeGreaterThan(0);
    }
  });

  it("with a mark, reads only the sessions changed or deleted since it (10,000 sessions, 3 grown and 1 deleted since)", async () => {
    const { url } = await freshStore();
    const db = rawPool(url);
    await db.query(
      `INSERT INTO sessions (id, cwd, created, header, first_message, last_seq)
       SELECT md5('since' || g)::uuid::text, '/since/project-' || g / 100, now(), repeat('h', 180), repeat('m', 40), 12
         FROM generate_series(1, $1::int) g`,
      [SESSIONS],
    );
    await db.query("INSERT INTO search_sessions (session_id, generation, indexed_seq) SELECT id, generation, last_seq FROM sessions");
    const mark = (await db.query<{ mark: string }>(MARK_NOW)).rows[0]!.mark;
    await db.query("INSERT INTO search_mark (mark) VALUES ($1)", [mark]);
    const changed = [1, 2, 3].map((g) => `md5('since' || ${g})::uuid::text`).join(", ");
    await db.query(`UPDATE sessions SET last_seq = 13 WHERE id IN (${changed})`);
    await db.query("DELETE FROM sessions WHERE id = md5('since' || 4)::uuid::text");
    await db.query("ANALYZE sessions, search_sessions, session_deletions");
    const behind = async () => (await db.query<{ behind: boolean }>(FRESH_SINCE_SQL, [mark])).rows[0]!.behind;
    expect(await behind()).toBe(true);
    const plan = async (sql: string, params: unknown[]) =>
      nodesOf((await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params)).rows[0]!["QUERY PLAN"][0]!.Plan as PlanNode);
    // the index brought up to date (as a refresh would): still only the changes are read
    await db.query(`UPDATE search_sessions SET indexed_seq = 13 WHERE session_id IN (${changed})`);
    await db.query("DELETE FROM search_sessions WHERE session_id = md5('since' || 4)::uuid::text");
    expect(await behind()).toBe(false);
    const since = await plan(FRESH_SINCE_SQL, [mark]);
    // (session_deletions holds only the deletions since the mark: a refresh forgets those below it)
    const fleetScans = since.filter((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] !== "session_deletions");
    expect(fleetScans.map((n) => n["Relation Name"])).toEqual([]);
    expect(since.some((n) => n["Index Name"] === "sessions_changed_xid")).toBe(true);
    expect(rowsRead(since, "sessions")).toBeLessThan(20);
    expect(rowsRead(since, "search_sessions")).toBeLessThan(20);
    // the measure is not blind: the check without a mark reads every session
    expect(rowsRead(await plan(FRESH_SQL, []), "sessions")).toBeGreaterThanOrEqual(SESSIONS - 1);
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
    const since = (await db.query<{ mark: string }>(MARK_NOW)).rows[0]!.mark;
    const behindSince = async () => (await db.query<{ behind: boolean }>(FRESH_SINCE_SQL, [since])).rows[0]!.behind;
    expect(await behindSince()).toBe(false);
    for (const [what, change, undo] of cases) {
      await db.query(change);
      expect(await behind(), what).toBe(true);
      expect(await behindSince(), `${what}, since the mark`).toBe(true);
      await db.query(undo);
      expect(await behind(), `${what}, undone`).toBe(false);
      expect(await behindSince(), `${what}, undone, since the mark`).toBe(false);
    }
  });

  it("a change by a transaction open while a refresh runs is found by the next search (the mark: the oldest running one)", async () => {
    const { store, url } = await freshStore();
    const db = rawPool(url);
    const a = await session(store, [message("user", "first words")]);
    const index = await openIndex(store);
    await index.refresh();
    // a writer whose transaction began before the refresh and commits after it
    const writer = await db.connect();
    try {
      await writer.query("BEGIN");
      const late = message("user", "latecomer words");
      await writer.query("INSERT INTO entries (session_id, seq, entry_id, kind, line) VALUES ($1, 2, $2, 'message', $3)", [
        a.id,
        late.entryId,
        late.line,
      ]);
      await writer.query("UPDATE sessions SET last_seq = 2 WHERE id = $1", [a.id]);
      await session(store, [message("user", "other words")]); // the index is behind: the next search refreshes
      expect((await index.search("words")).map((h) => h.sessionId)).not.toContain(undefined);
      expect(await index.search("latecomer")).toEqual([]);
      await writer.query("COMMIT");
    } finally {
      writer.release();
    }
    expect((await index.search("latecomer")).map((h) => h.sessionId)).toEqual([a.id]);
    // and a session deleted after a refresh left its mark is removed by the next one
    await db.query("DELETE FROM sessions WHERE id = $1", [a.id]);
    expect(await index.refresh()).toMatchObject({ removed: 1 });
    expect(await index.search("first")).toEqual([]);
    expect((await db.query("SELECT count(*)::int AS n FROM session_deletions")).rows).toEqual([{ n: 0 }]);
  });
});
