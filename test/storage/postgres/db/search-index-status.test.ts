import { describe, expect, it } from "vitest";
import { statusStatement } from "../../../../src/storage/postgres/db/search-index.ts";
import { freshStore, rawPool } from "../../../support/pg-sessions.ts";
import { MARK_NOW, nodesOf, type PlanNode, rowsRead } from "../../../support/pg-plans.ts";
import { pgCluster } from "../../../support/postgres.ts";

const SESSIONS = 10_000;

// Skipped only where no PostgreSQL can start: one loud SKIPPED line, and under CI=true a failed run instead (support/pg-global-setup.ts).
describe.skipIf(!pgCluster())("PostgreSQL search index: status through the change marks", () => {
  it("gives the full comparison's answer for new, grown, rewritten and deleted sessions, reading only those (10k sessions)", async () => {
    const { url } = await freshStore();
    const db = rawPool(url);
    await db.query(
      `INSERT INTO sessions (id, cwd, created, header, first_message, last_seq, body_bytes)
       SELECT 's' || g, '/status/project-' || g / 100, now(), repeat('h', 180), repeat('m', 40), 12, 1000 + g
         FROM generate_series(1, $1::int) g`,
      [SESSIONS],
    );
    // the index as a refresh leaves it, and its mark
    await db.query(
      `INSERT INTO search_sessions (session_id, generation, indexed_seq, indexed_bytes)
       SELECT id, generation, last_seq, body_bytes FROM sessions`,
    );
    await db.query("INSERT INTO search_entries (session_id, seq, role, body) VALUES ('s1', 1, 'user', 'a b'), ('s2', 1, 'user', 'c')");
    const mark = (await db.query<{ mark: string }>(MARK_NOW)).rows[0]!.mark;
    await db.query("INSERT INTO search_mark (mark) VALUES ($1)", [mark]);
    const status = async (m: string | null) => {
      const { sql, params } = statusStatement(m);
      return (await db.query(sql, params)).rows[0];
    };
    expect(await status(mark)).toEqual(await status(null));
    expect(await status(mark)).toMatchObject({ n: 0, bytes: 0, gone: 0, indexed: SESSIONS, texts: 2 });
    // a new session, one grown by 300 bytes, one rewritten (all its 1,003 bytes behind), one deleted
    await db.query("INSERT INTO sessions (id, cwd, created, header, last_seq, body_bytes) VALUES ('new', '/n', now(), '{}', 2, 77)");
    await db.query("UPDATE sessions SET last_seq = 13, body_bytes = body_bytes + 300 WHERE id = 's2'");
    await db.query("UPDATE sessions SET generation = generation + 1 WHERE id = 's3'");
    await db.query("DELETE FROM sessions WHERE id = 's4'");
    await db.query("ANALYZE sessions, search_sessions, session_deletions");
    const full = await status(null);
    expect(full).toEqual({ n: 3, bytes: 77 + 300 + 1003, gone: 1, indexed: SESSIONS, texts: 2 });
    expect(await status(mark)).toEqual(full);
    // each undone: both answers back to fresh together
    await db.query("DELETE FROM sessions WHERE id = 'new'");
    await db.query("UPDATE search_sessions SET indexed_seq = 13, indexed_bytes = indexed_bytes + 300 WHERE session_id = 's2'");
    await db.query("UPDATE search_sessions SET generation = generation + 1 WHERE session_id = 's3'");
    await db.query("DELETE FROM search_sessions WHERE session_id = 's4'");
    expect(await status(mark)).toEqual(await status(null));
    expect(await status(mark)).toMatchObject({ n: 0, bytes: 0, gone: 0 });
    // the plan with the mark reads the changed sessions, not the fleet
    await db.query("UPDATE sessions SET last_seq = 14 WHERE id = 's5'");
    const plan = async (m: string | null) => {
      const { sql, params } = statusStatement(m);
      return nodesOf((await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params)).rows[0]!["QUERY PLAN"][0]!.Plan as PlanNode);
    };
    expect(await status(mark)).toEqual(await status(null));
    expect(rowsRead(await plan(mark), "sessions")).toBeLessThan(20);
    // the measure is not blind: the full comparison reads every session
    expect(rowsRead(await plan(null), "sessions")).toBeGreaterThanOrEqual(SESSIONS - 1);
  });
});
