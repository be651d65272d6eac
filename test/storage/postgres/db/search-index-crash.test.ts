import { describe, expect, it } from "vitest";
import { onLines, spawnTs } from "../../../support/child.ts";
import { message, openIndex, session } from "../../../support/pg-search.ts";
import { freshStore, rawPool } from "../../../support/pg-sessions.ts";
import { pgCluster } from "../../../support/postgres.ts";

const REFRESHER = "test/storage/postgres/db/helpers/pg-index-refresher.ts";

/** Every index row: what a true index holds is a function of the entry rows. */
async function indexContents(db: ReturnType<typeof rawPool>) {
  const { rows } = await db.query("SELECT session_id, seq::int, role, entry_id, body FROM search_entries ORDER BY session_id, seq, role");
  return rows;
}

describe.skipIf(!pgCluster())("PostgreSQL search index: a refresher SIGKILLed mid-build", () => {
  it("leaves every mark true (rows exactly up to it, none past), and the next refresh completes it as a rebuild would", async () => {
    const { store, url } = await freshStore();
    const db = rawPool(url);
    for (let s = 0; s < 4; s++) {
      const { append } = await session(store, []);
      for (let b = 0; b < 2; b++)
        await append(Array.from({ length: 350 }, (_, i) => message("user", `session ${s} line ${b * 350 + i} text`)));
    }
    // 2,800 rows read 1,000 a batch: the first batch is committed, the second in flight when the process dies
    const child = spawnTs(REFRESHER, [JSON.stringify({ url, killBeforeCommit: 3 })]);
    const out: string[] = [];
    onLines(child, (line) => out.push(line));
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on("close", (_code, sig) => resolve(sig)));
    expect({ signal, out, stderr }).toMatchObject({ signal: "SIGKILL", out: [] });
    const marks = await db.query("SELECT session_id, indexed_seq::int AS seq FROM search_sessions");
    const covered = marks.rows.reduce((sum, r) => sum + r.seq, 0);
    expect(covered).toBe(1000); // one batch committed, the next rolled back
    for (const { session_id, seq } of marks.rows) {
      const { rows } = await db.query(
        "SELECT count(*)::int AS n, COALESCE(max(seq), 0)::int AS last FROM search_entries WHERE session_id = $1",
        [session_id],
      );
      expect(rows[0]).toEqual({ n: seq, last: seq });
    }
    const unmarked = await db.query(
      `SELECT count(*)::int AS n FROM search_entries e
        WHERE NOT EXISTS (SELECT 1 FROM search_sessions i WHERE i.session_id = e.session_id)`,
    );
    expect(unmarked.rows).toEqual([{ n: 0 }]);
    const index = await openIndex(store); // waits for no lock: the dead refresher's went with its connection
    expect(await index.refresh()).toMatchObject({ entriesIndexed: 1800 });
    expect(await index.status()).toMatchObject({ fresh: true, sessionsBehind: 0, bytesBehind: 0, entriesIndexed: 2800 });
    const resumed = await indexContents(db);
    expect(resumed).toHaveLength(2800);
    await index.rebuild();
    expect(await indexContents(db)).toEqual(resumed);
  });
});
