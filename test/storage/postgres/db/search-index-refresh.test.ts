import { describe, expect, it } from "vitest";
import { PgStore } from "../../../../src/storage/postgres/db/index.ts";
import { migrateSchema, SEARCH_MARK_SCHEMA_VERSION, SEARCH_SCHEMA_VERSION } from "../../../../src/storage/postgres/db/schema.ts";
import { INDEX_LOCK, MAX_INDEXED_LINE_BYTES } from "../../../../src/storage/postgres/db/search-index.ts";
import { bytesOf, message, openIndex, session } from "../../../support/pg-search.ts";
import { freshStore, headerLine, rawPool, track } from "../../../support/pg-sessions.ts";
import { freshDatabase, pgCluster } from "../../../support/postgres.ts";

/** The index rows of a session with their row versions (xmin changes when a row is written again). */
async function indexRows(db: ReturnType<typeof rawPool>, id: string) {
  const { rows } = await db.query("SELECT seq::int, role, xmin::text AS v FROM search_entries WHERE session_id = $1 ORDER BY seq, role", [
    id,
  ]);
  return rows;
}

describe.skipIf(!pgCluster())("PostgreSQL search index: incremental refresh, rewrite, delete, rebuild", () => {
  it("reads only the rows past each session's mark: a second refresh reads nothing, an append reads only its rows", async () => {
    const { store, url } = await freshStore();
    const db = rawPool(url);
    const first = [message("user", "one apple"), message("assistant", "two apples")];
    const a = await session(store, first);
    const b = await session(store, [message("user", "untouched banana")]);
    const index = await openIndex(store);
    expect(await index.status()).toEqual({
      location: "pg",
      fresh: false,
      sessionsBehind: 2,
      bytesBehind: bytesOf(first) + bytesOf([message("user", "untouched banana")]),
      sessionsIndexed: 0,
      entriesIndexed: 0,
      sessionsGone: 0,
    });
    expect(await index.refresh()).toMatchObject({ sessionsIndexed: 2, sessionsAdded: 2, entriesIndexed: 3, removed: 0 });
    expect(await index.refresh()).toMatchObject({ sessionsIndexed: 0, filesSeen: 0, entriesIndexed: 0, bytesRead: 0, removed: 0 });
    expect(await index.status()).toMatchObject({ fresh: true, sessionsBehind: 0, bytesBehind: 0, sessionsIndexed: 2, entriesIndexed: 3 });
    const before = await indexRows(db, a.id);
    const beforeB = await indexRows(db, b.id);
    const more = [message("toolResult", "three cherries"), message("user", "four cherries")];
    await a.append(more);
    expect(await index.status()).toMatchObject({ fresh: false, sessionsBehind: 1, bytesBehind: bytesOf(more) });
    expect(await index.refresh()).toEqual({
      sessionsIndexed: 1,
      filesSeen: 1,
      sessionsAdded: 0,
      sessionsUpdated: 1,
      sessionsReindexed: 0,
      sessionsRemoved: 0,
      removed: 0,
      entriesIndexed: 2,
      bytesRead: bytesOf(more),
      headerBytesRead: 0,
      artifactBytesRead: 0,
      malformedLines: 0,
      largeLinesSkipped: 0,
    });
    const after = await indexRows(db, a.id);
    expect(after.slice(0, before.length)).toEqual(before); // the rows indexed before were not written again
    expect(after.slice(before.length).map((r) => [r.seq, r.role])).toEqual([
      [3, "toolResult"],
      [4, "user"],
    ]);
    expect(await indexRows(db, b.id)).toEqual(beforeB);
    expect((await db.query("SELECT indexed_seq::int, indexed_bytes::int FROM search_sessions WHERE session_id = $1", [a.id])).rows).toEqual(
      [{ indexed_seq: 4, indexed_bytes: bytesOf([...first, ...more]) }],
    );
    expect((await index.search("cherries")).map((h) => h.role).sort()).toEqual(["toolResult", "user"]);
  });

  it("reads past a line longer than MAX_INDEXED_LINE_BYTES without fetching it, and indexes the lines after it", async () => {
    const { store } = await freshStore();
    const big = message("toolResult", `bigword ${"z".repeat(MAX_INDEXED_LINE_BYTES)}`);
    const lines = [message("user", "before it"), big, message("user", "after it")];
    await session(store, lines);
    const index = await openIndex(store);
    expect(await index.refresh()).toMatchObject({ entriesIndexed: 2, largeLinesSkipped: 1, bytesRead: bytesOf(lines) });
    expect((await index.search("it")).map((h) => h.entryId).sort()).toEqual([lines[0]!.entryId, lines[2]!.entryId]);
    expect(await index.search("bigword")).toEqual([]);
    expect(await index.status()).toMatchObject({ fresh: true, bytesBehind: 0 });
  });

  it("re-indexes a rewritten session and removes a deleted one (never answering with its rows)", async () => {
    const { store } = await freshStore();
    const a = await session(store, [message("user", "obsolete wording"), message("user", "kept words")]);
    const b = await session(store, [message("user", "doomed obsolete")]);
    const index = await openIndex(store);
    expect(await index.search("obsolete")).toHaveLength(2);
    // as many lines as before: only the session's generation tells the rows were replaced
    await store.rewriteSession(a.id, a.token, headerLine(a.id), [message("user", "fresh wording"), message("user", "other words")]);
    await store.deleteSession(b.id, b.token);
    expect(await index.status()).toMatchObject({ fresh: false, sessionsBehind: 1, sessionsGone: 1 });
    expect(await index.refresh()).toMatchObject({
      sessionsIndexed: 1,
      sessionsReindexed: 1,
      entriesIndexed: 2,
      removed: 1,
      sessionsRemoved: 1,
    });
    expect(await index.search("obsolete")).toEqual([]);
    expect(await index.search("kept")).toEqual([]);
    // quoted: the exact form ("words" in the other line is a form of "wording" too)
    expect((await index.search('"wording"')).map((h) => h.sessionId)).toEqual([a.id]);
    expect(await index.status()).toMatchObject({ fresh: true, sessionsBehind: 0, bytesBehind: 0, sessionsGone: 0 });
  });

  it("a dropped index table, or its GIN index, is recreated and refilled; rebuild starts from nothing", async () => {
    const { store, url } = await freshStore();
    const db = rawPool(url);
    const a = await session(store, [message("user", "durable fact"), message("assistant", "durable reply")]);
    const index = await openIndex(store);
    expect(await index.search("durable")).toHaveLength(2);
    await db.query("DROP TABLE search_entries");
    expect(await index.status()).toMatchObject({ fresh: false, sessionsBehind: 1 });
    expect((await index.search("durable")).map((h) => h.sessionId)).toEqual([a.id, a.id]);
    await db.query("DROP TABLE search_sessions");
    expect(await index.search("durable")).toHaveLength(2);
    await db.query("DROP INDEX search_entries_doc");
    expect(await index.search("durable")).toHaveLength(2);
    expect((await db.query("SELECT to_regclass('search_entries_doc') IS NOT NULL AS present")).rows).toEqual([{ present: true }]);
    await db.query("DELETE FROM search_entries"); // damaged: rows gone, marks kept
    expect(await index.search("durable")).toEqual([]);
    expect(await index.rebuild()).toMatchObject({ sessionsIndexed: 1, entriesIndexed: 2, removed: 0 });
    expect(await index.search("durable")).toHaveLength(2);
  });

  for (const action of ["rebuild", "recreate"] as const) {
    it(`a ${action} waits for a refresher's lock before dropping anything`, async () => {
      const { store, url } = await freshStore();
      const db = rawPool(url);
      await session(store, [message("user", "steady words")]);
      const index = await openIndex(store);
      await index.refresh();
      const oid = async () => (await db.query("SELECT 'search_entries'::regclass::oid::int AS oid")).rows[0].oid;
      const before = await oid();
      if (action === "recreate") await db.query("DROP TABLE search_sessions"); // half the pair: both are made anew
      const refresher = await db.connect(); // stands for a refresher in another process, mid-refresh
      try {
        await refresher.query(`SELECT pg_advisory_lock(${INDEX_LOCK})`);
        const running = action === "rebuild" ? index.rebuild() : index.refresh();
        for (;;) {
          const waiting = await db.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
          if (waiting.rows[0].n > 0) break;
          await new Promise((r) => setImmediate(r));
        }
        expect(await oid()).toBe(before); // the table the refresher writes is still there
        await refresher.query(`SELECT pg_advisory_unlock(${INDEX_LOCK})`);
        expect(await running).toMatchObject({ sessionsIndexed: 1, entriesIndexed: 1 });
      } finally {
        refresher.release();
      }
      expect(await oid()).not.toBe(before);
      expect(await index.search("steady")).toHaveLength(1);
    });
  }

  it("on a read-only store (migrate: check) runs no DDL: missing tables are INDEX_UNAVAILABLE, and a refused write too", async () => {
    const { store, url } = await freshStore();
    const db = rawPool(url);
    await session(store, [message("user", "readable text")]);
    const readOnly = track(await PgStore.connect(url, { migrate: "check" }));
    const ro = await openIndex(readOnly, true);
    expect(await ro.search("readable")).toHaveLength(1); // the tables exist and the role may write them
    await db.query("DROP TABLE search_entries");
    await expect(ro.search("readable")).rejects.toMatchObject({ code: "INDEX_UNAVAILABLE" });
    await expect(ro.rebuild()).rejects.toMatchObject({ code: "INDEX_UNAVAILABLE" });
    await expect(openIndex(readOnly, true)).rejects.toMatchObject({ code: "INDEX_UNAVAILABLE" });
    expect((await db.query("SELECT to_regclass('search_entries') IS NULL AS absent")).rows).toEqual([{ absent: true }]);
    expect(await ro.status()).toMatchObject({ fresh: false, sessionsBehind: 1, bytesBehind: expect.any(Number) });
    await (await openIndex(store)).refresh();
    const standby = track(await PgStore.connect(`${url}?options=-c%20default_transaction_read_only%3Don`, { migrate: "check" }));
    const sb = await openIndex(standby, true);
    expect(await sb.search("readable")).toHaveLength(1); // a fresh index is searched without writing
    await session(store, [message("user", "newer text")]);
    await expect(sb.search("text")).rejects.toMatchObject({ code: "INDEX_UNAVAILABLE" });
    expect(await sb.status()).toMatchObject({ fresh: false, sessionsBehind: 1 });
  });

  it("on a schema older than the search step is INDEX_UNAVAILABLE and creates nothing", async () => {
    const url = await freshDatabase();
    const old = track(await PgStore.connect(url, { migrate: false }));
    await migrateSchema(old.pool, SEARCH_SCHEMA_VERSION - 1);
    await expect(openIndex(old)).rejects.toMatchObject({ code: "INDEX_UNAVAILABLE" });
    const db = rawPool(url);
    expect((await db.query("SELECT to_regclass('search_entries') IS NULL AS absent")).rows).toEqual([{ absent: true }]);
  });

  it("on a schema with the search tables but not the change marks is INDEX_UNAVAILABLE and creates nothing", async () => {
    const url = await freshDatabase();
    const old = track(await PgStore.connect(url, { migrate: false }));
    await migrateSchema(old.pool, SEARCH_MARK_SCHEMA_VERSION - 1);
    await expect(openIndex(old)).rejects.toMatchObject({ code: "INDEX_UNAVAILABLE" });
    const db = rawPool(url);
    const { rows } = await db.query(
      "SELECT to_regclass('search_entries') IS NULL AS absent, to_regclass('search_mark') IS NULL AS unmarked",
    );
    expect(rows).toEqual([{ absent: SEARCH_MARK_SCHEMA_VERSION - 1 < SEARCH_SCHEMA_VERSION, unmarked: true }]);
  });

  it("an append neither waits for the index nor fails because of it", async () => {
    const { store, url } = await freshStore();
    const db = rawPool(url);
    const a = await session(store, [message("user", "base")]);
    await (await openIndex(store)).refresh();
    const locker = await db.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE search_entries, search_sessions IN ACCESS EXCLUSIVE MODE");
      await a.append([message("user", "while locked")]); // would hang (test timeout) if an append touched the index
      await locker.query("ROLLBACK");
    } finally {
      locker.release();
    }
    await db.query("DROP TABLE search_entries, search_sessions");
    await a.append([message("user", "while dropped")]);
    expect((await db.query("SELECT count(*)::int AS n FROM entries WHERE session_id = $1", [a.id])).rows).toEqual([{ n: 3 }]);
  });

  it("stays consistent with appends committing while it refreshes", async () => {
    const { store } = await freshStore();
    const index = await openIndex(store);
    const writers = await Promise.all([0, 1, 2].map(() => session(store, [])));
    let written = 0;
    const appending = (async () => {
      for (let round = 0; round < 30; round++) {
        for (const [w, s] of writers.entries()) {
          await s.append([message("user", `word${w}x${round} common`), message("assistant", `reply${w}x${round} common`)]);
          written += 2;
        }
      }
    })();
    const refreshing = (async () => {
      let refreshes = 0;
      while (written < 180 || refreshes === 0) {
        await index.refresh();
        refreshes++;
      }
    })();
    await Promise.all([appending, refreshing]);
    expect((await index.search("common", { limit: 1000 })).length).toBe(180);
    expect(await index.status()).toMatchObject({ fresh: true, sessionsBehind: 0, bytesBehind: 0 });
    for (const w of [0, 1, 2]) for (const round of [0, 17, 29]) expect(await index.search(`word${w}x${round}`)).toHaveLength(1);
  });
});
