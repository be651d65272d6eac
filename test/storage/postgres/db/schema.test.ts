import { describe, expect, it } from "vitest";
import { SCHEMA_TABLES } from "../../../support/pg-sessions.ts";
import { PgStore, SCHEMA_VERSION } from "../../../../src/storage/postgres/db/index.ts";
import { freshDatabase, pgCluster } from "../../../support/postgres.ts";
import { rawPool, track } from "../../../support/pg-sessions.ts";

/** Each step recorded once, 1 … SCHEMA_VERSION. */
const everyStep = () => Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1 }));

describe.skipIf(!pgCluster())("PostgreSQL schema", () => {
  it("is created on connect and left alone by the next connect", async () => {
    const url = await freshDatabase();
    await track(await PgStore.connect(url)).close();
    const db = rawPool(url);
    const tables = await db.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename");
    expect(tables.rows.map((r) => r.tablename)).toEqual(SCHEMA_TABLES);
    await db.query("INSERT INTO sessions (id, cwd, created, header) VALUES ('keep', '/x', now(), '{}')");
    await track(await PgStore.connect(url)).close();
    const versions = await db.query("SELECT version FROM ts_schema_version ORDER BY version");
    expect(versions.rows).toEqual(everyStep());
    expect((await db.query("SELECT id FROM sessions")).rows).toEqual([{ id: "keep" }]);
  });

  it("is migrated exactly once when eight connections migrate at the same moment", async () => {
    const url = await freshDatabase();
    const stores = await Promise.all(Array.from({ length: 8 }, () => PgStore.connect(url, { maxConnections: 1 })));
    for (const s of stores) await track(s).close();
    const db = rawPool(url);
    expect((await db.query("SELECT version FROM ts_schema_version ORDER BY version")).rows).toEqual(everyStep());
  });

  it("refuses a database whose schema is newer than the library (PERSISTENCE_FAILED)", async () => {
    const url = await freshDatabase();
    await track(await PgStore.connect(url)).close();
    const db = rawPool(url);
    await db.query("INSERT INTO ts_schema_version (version) VALUES ($1)", [SCHEMA_VERSION + 1]);
    await expect(PgStore.connect(url)).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
  });

  it("resolves an id prefix and lists a cwd through indexes", async () => {
    const url = await freshDatabase();
    await track(await PgStore.connect(url)).close();
    const db = rawPool(url);
    const client = await db.connect();
    try {
      await client.query("SET enable_seqscan = off");
      const prefix = await client.query("EXPLAIN SELECT id FROM sessions WHERE id LIKE '0197ab%'");
      expect(prefix.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("sessions_id_prefix");
      const list = await client.query(
        "EXPLAIN SELECT id FROM sessions WHERE md5(cwd) = md5('/x') AND cwd = '/x' ORDER BY modified DESC, id DESC LIMIT 10",
      );
      expect(list.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("sessions_cwd_modified");
    } finally {
      client.release();
    }
  });

  it("rejects a URL that is not postgres:// (INVALID_OPTION)", async () => {
    await expect(PgStore.connect("mysql://x")).rejects.toMatchObject({ code: "INVALID_OPTION" });
  });
});
