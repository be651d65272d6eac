import { describe, expect, it } from "vitest";
import { SCHEMA_TABLES } from "../../../support/pg-sessions.ts";
import { SessionManager } from "../../../../src/index.ts";
import { PgStore, SCHEMA_VERSION } from "../../../../src/storage/postgres/db/index.ts";
import { closeUrlStores } from "../../../../src/storage/store-url.ts";
import { entryLine, headerLine, rawPool, track } from "../../../support/pg-sessions.ts";
import { freshDatabase, pgCluster } from "../../../support/postgres.ts";

/** Each step recorded once, 1 … SCHEMA_VERSION. */
const everyStep = () => Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1 }));

/** A database holding an application's own `sessions` table (incompatible with ours) in `public`, with one row. */
async function appDatabase(): Promise<{ url: string; db: ReturnType<typeof rawPool> }> {
  const url = await freshDatabase();
  const db = rawPool(url);
  await db.query("CREATE TABLE sessions (sid serial PRIMARY KEY, user_name text NOT NULL, expires timestamptz)");
  await db.query("INSERT INTO sessions (user_name, expires) VALUES ('alice', '2030-01-01T00:00:00Z')");
  return { url, db };
}

async function tablesOf(db: ReturnType<typeof rawPool>, schema: string): Promise<string[]> {
  const { rows } = await db.query("SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", [schema]);
  return rows.map((r) => r.tablename);
}

describe.skipIf(!pgCluster())("PostgreSQL schema option: the tables in a namespace of their own (issue 22)", () => {
  it("works beside an application's own sessions table, which it leaves untouched (PgStore, schema option)", async () => {
    const { url, db } = await appDatabase();
    const before = await db.query("SELECT * FROM public.sessions ORDER BY sid");
    const store = track(await PgStore.connect(url, { schema: "transcript_store" }));
    const { session, token } = await store.createSession(headerLine(undefined, "/app"), { lease: { holder: "t", ttlMs: 60_000 } });
    await store.appendBatch(session.id, token!, 1, [entryLine(1), entryLine(2)]);
    expect((await store.listSessions({ cwd: "/app" })).map((s) => s.id)).toEqual([session.id]);
    await store.close();
    const again = track(await PgStore.connect(url, { schema: "transcript_store" }));
    expect((await again.loadSession(session.id)).entries.map((e) => e.line)).toEqual([entryLine(1).line, entryLine(2).line]);
    expect(await tablesOf(db, "public")).toEqual(["sessions"]);
    expect(await tablesOf(db, "transcript_store")).toEqual(SCHEMA_TABLES);
    expect((await db.query("SELECT * FROM public.sessions ORDER BY sid")).rows).toEqual(before.rows);
    expect((await db.query("SELECT id FROM transcript_store.sessions")).rows).toEqual([{ id: session.id }]);
  });

  it("a ?schema= URL parameter does the same through SessionManager: create, append, list, reopen", async () => {
    const { url, db } = await appDatabase();
    const store = `${url}?schema=ts_app`;
    try {
      const m = await SessionManager.create("/proj", { store });
      m.appendMessage({ role: "user", content: "hello", timestamp: 1 });
      m.appendMessage({ role: "assistant", content: [{ type: "text", text: "hi" }], timestamp: 2 });
      await m.close();
      expect((await SessionManager.list("/proj", { store })).map((s) => s.id)).toEqual([m.sessionId]);
      const reopened = await SessionManager.open(m.sessionId, { store, readOnly: true });
      expect(reopened.getEntries().map((e) => e.type)).toEqual(m.getEntries().map((e) => e.type));
      expect(reopened.getEntries()).toHaveLength(2);
      await reopened.close();
    } finally {
      await closeUrlStores();
    }
    expect(await tablesOf(db, "public")).toEqual(["sessions"]);
    expect((await db.query("SELECT user_name FROM public.sessions")).rows).toEqual([{ user_name: "alice" }]);
    expect((await db.query("SELECT id FROM ts_app.sessions")).rows).toEqual([{ id: expect.any(String) }]);
  }, 30_000);

  it("migrates each schema exactly once when connections for two schemas migrate at the same moment", async () => {
    const { url, db } = await appDatabase();
    const names = ["ts_a", "ts_b", "ts_a", "ts_b", "ts_a", "ts_b", "ts_a", "ts_b"];
    const stores = await Promise.all(names.map((schema) => PgStore.connect(url, { schema, maxConnections: 1 })));
    for (const s of stores) await track(s).close();
    for (const schema of ["ts_a", "ts_b"]) {
      expect((await db.query(`SELECT version FROM ${schema}.ts_schema_version ORDER BY version`)).rows).toEqual(everyStep());
    }
    expect(await tablesOf(db, "public")).toEqual(["sessions"]);
  });

  it("refuses a bad schema name, a schema with a pool of the caller's, and two different names (INVALID_OPTION)", async () => {
    const url = await freshDatabase();
    for (const schema of ["", "Bad", "a-b", 'a"; DROP TABLE x; --', "pg_mine", "1abc", "a b", "x".repeat(64)]) {
      await expect(PgStore.connect(url, { schema }), schema).rejects.toMatchObject({ code: "INVALID_OPTION" });
    }
    await expect(PgStore.connect(`${url}?schema=Bad`)).rejects.toMatchObject({ code: "INVALID_OPTION" });
    await expect(PgStore.connect(`${url}?schema=one`, { schema: "two" })).rejects.toMatchObject({ code: "INVALID_OPTION" });
    await expect(PgStore.connect(rawPool(url), { schema: "mine" })).rejects.toMatchObject({ code: "INVALID_OPTION" });
    const db = rawPool(url);
    expect(
      (await db.query("SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'")).rows,
    ).toEqual([{ nspname: "public" }]);
  });
});
