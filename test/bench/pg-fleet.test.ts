import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fleetOps, PROBE } from "../../bench/postgres/fleet-ops.ts";
import {
  fleetCwd,
  fleetHeader,
  fleetId,
  fleetToken,
  growFleet,
  ORPHAN_EVERY,
  PER_CWD,
  TEMPLATES,
  writeTemplates,
} from "../../bench/postgres/fleet-seed.ts";
import { PgStore } from "../../src/storage/postgres/db/index.ts";
import { PgSessionIndex } from "../../src/storage/postgres/pg-index.ts";
import { blobRefsIn } from "../../src/blob/blob-ref.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";

const ENTRIES = 9;

describe.skipIf(!pgCluster())("bench: the fleet generated server-side", () => {
  let store: PgStore;
  let raw: pg.Pool;

  beforeAll(async () => {
    const url = await freshDatabase();
    store = await PgStore.connect(url);
    raw = new pg.Pool({ connectionString: url, max: 2 });
    await writeTemplates(store, raw, ENTRIES, 300);
    await growFleet(raw, 0, 1000);
  });
  afterAll(async () => {
    await store?.close();
    await raw?.end();
  });

  it("holds every derived column as the library would have written it", async () => {
    const count = async (sql: string) => Number((await raw.query(sql)).rows[0].n);
    expect(await count("SELECT count(*) AS n FROM sessions")).toBe(1000 + TEMPLATES);
    expect(await count("SELECT count(*) AS n FROM entries")).toBe((1000 + TEMPLATES) * ENTRIES);
    // body_bytes, message_count and last_seq against the rows themselves, for every session
    const wrong = await count(
      `SELECT count(*) AS n FROM sessions s
         JOIN (SELECT session_id, sum(octet_length(line) + 1) AS bytes, count(*) FILTER (WHERE kind = 'message') AS messages,
                      max(seq) AS last FROM entries GROUP BY session_id) e ON e.session_id = s.id
        WHERE s.body_bytes <> e.bytes OR s.message_count <> e.messages OR s.last_seq <> e.last`,
    );
    expect(wrong).toBe(0);
    // every blob ref names a stored blob whose bytes hash to it, and the lines name exactly the refs
    expect(
      await count("SELECT count(*) AS n FROM blob_refs r JOIN blobs b USING (sha256) WHERE encode(sha256(b.bytes), 'hex') = r.sha256"),
    ).toBe(1000 + TEMPLATES);
    const { rows } = await raw.query("SELECT line FROM entries WHERE session_id = $1 ORDER BY seq", [fleetId(PROBE)]);
    const refs = (await raw.query("SELECT sha256 FROM blob_refs WHERE session_id = $1", [fleetId(PROBE)])).rows.map((r) => r.sha256);
    expect(rows.flatMap((r) => blobRefsIn(r.line))).toEqual(refs);
  });

  it("lists, names, finds and collects through the library as the bench expects", async () => {
    const listed = await store.listSessions({ cwd: fleetCwd(PROBE) });
    expect(listed).toHaveLength(PER_CWD);
    const probe = listed.find((s) => s.id === fleetId(PROBE))!;
    expect(probe).toMatchObject({ sessionName: `fleet session ${PROBE % TEMPLATES}`, messageCount: ENTRIES - 1 });
    expect(probe.firstMessage).toContain(fleetToken(PROBE));
    expect((await store.getSession(fleetId(PROBE)))!.header).toBe(fleetHeader(PROBE));
    expect((await store.gc({ dryRun: true })).deleted).toHaveLength(1000 / ORPHAN_EVERY);
    const index = await PgSessionIndex.open(store.pool, { readOnly: false, name: "pg" });
    expect((await index.search(fleetToken(PROBE))).map((h) => h.sessionId)).toEqual([fleetId(PROBE)]);
    // every timed operation reads something through the library and through raw SQL, and a fork leaves nothing behind
    for (const op of fleetOps(store, raw, index)) {
      expect(await op.ours(), op.name).toBeGreaterThan(0);
      expect(await op.raw(), op.name).toBeGreaterThan(0);
    }
    expect(Number((await raw.query("SELECT count(*) AS n FROM sessions")).rows[0].n)).toBe(1000 + TEMPLATES);
    await index.close();
  });

  it("grows additively: sessions 1001..2000 join the first thousand, the blobs stay collectable only where orphaned", async () => {
    await growFleet(raw, 1000, 2000);
    expect(Number((await raw.query("SELECT count(*) AS n FROM sessions")).rows[0].n)).toBe(2000 + TEMPLATES);
    expect(await store.listSessions({ cwd: fleetCwd(1500) })).toHaveLength(PER_CWD);
    expect((await store.gc({ dryRun: true })).deleted).toHaveLength(2000 / ORPHAN_EVERY);
    expect(await store.getSession(fleetId(2000))).not.toBeNull();
  });
});
