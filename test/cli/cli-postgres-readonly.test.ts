import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/index.ts";
import { migrateSchema } from "../../src/storage/postgres/db/schema.ts";
import { closeUrlStores } from "../../src/storage/store-url.ts";
import { cli } from "../support/cli.ts";
import { psql } from "../support/pg-cluster.ts";
import { rawPool } from "../support/pg-sessions.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";

/** Every table and schema outside the system ones: what DDL would leave behind. */
async function userObjects(url: string): Promise<string[]> {
  const { rows } = await rawPool(url).query(
    `SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
      WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
     UNION ALL SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname NOT IN ('information_schema', 'public')
     ORDER BY 1`,
  );
  return rows.map((r) => r.name);
}

/** A session written through the library into `store` (a URL, possibly with ?schema=). */
async function oneSession(store: string): Promise<string> {
  try {
    const m = await SessionManager.create("/proj", { store });
    m.appendMessage({ role: "user", content: "hello", timestamp: 1 });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "hi" }], timestamp: 2 });
    await m.close();
    return m.sessionId;
  } finally {
    await closeUrlStores();
  }
}

const READ_ONLY = [["ls"], ["ls", "--all"], ["show", "0"], ["export", "0"], ["stats"], ["verify"], ["gc", "--dry-run"], ["du"], ["usage"]];

describe.skipIf(!pgCluster())("read-only commands on a PostgreSQL store run no DDL (issue 22)", () => {
  it("on an empty database: each fails with SCHEMA_MISMATCH and creates no table", async () => {
    const url = await freshDatabase();
    for (const argv of READ_ONLY) {
      const r = await cli([...argv, "--store", url]);
      expect(r.code, argv.join(" ")).not.toBe(0);
      expect(r.stdout + r.stderr, argv.join(" ")).toContain("SCHEMA_MISMATCH");
      expect(await userObjects(url), argv.join(" ")).toEqual([]);
    }
  }, 60_000);

  it("on a database of an older schema version: fails with SCHEMA_MISMATCH and leaves the version as it was", async () => {
    const url = await freshDatabase();
    await migrateSchema(rawPool(url), 4);
    const r = await cli(["ls", "--store", url]);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain("SCHEMA_MISMATCH");
    expect((await rawPool(url).query("SELECT max(version) AS v FROM ts_schema_version")).rows).toEqual([{ v: 4 }]);
    expect((await rawPool(url).query("SELECT column_name FROM information_schema.columns WHERE column_name = 'body_bytes'")).rows).toEqual(
      [],
    );
  });

  it("a role without CREATE privilege reads a migrated database (ls, show, export, stats)", async () => {
    const cluster = pgCluster()!;
    const url = await freshDatabase();
    const id = await oneSession(url);
    const role = `reader_${randomBytes(4).toString("hex")}`;
    const dbName = url.slice(url.lastIndexOf("/") + 1);
    await psql(cluster.binDir, cluster.url, `CREATE ROLE ${role} LOGIN`);
    await psql(
      cluster.binDir,
      url,
      `REVOKE CREATE ON SCHEMA public FROM PUBLIC; REVOKE CREATE ON DATABASE ${dbName} FROM PUBLIC;
       GRANT USAGE ON SCHEMA public TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role};`,
    );
    const asReader = url.replace(/\/\/[^@/]*@/, `//${role}@`);
    const ls = await cli(["ls", "--all", "--store", asReader, "--json"]);
    expect(ls.stderr).toBe("");
    expect(ls.code).toBe(0);
    expect(ls.records.map((r) => r.id)).toEqual([id]);
    for (const argv of [["show", id], ["export", id], ["stats"]]) {
      const r = await cli([...argv, "--store", asReader]);
      expect(r.code, `${argv[0]}: ${r.stderr}`).toBe(0);
    }
    const exported = await cli(["export", id, "--store", asReader]);
    expect(exported.stdout).toContain('"hello"');
    // a role that may write rows but not create tables writes to an up-to-date database (no DDL when nothing is missing)
    const writer = `writer_${randomBytes(4).toString("hex")}`;
    await psql(cluster.binDir, cluster.url, `CREATE ROLE ${writer} LOGIN`);
    await psql(
      cluster.binDir,
      url,
      `GRANT USAGE ON SCHEMA public TO ${writer}; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${writer};`,
    );
    const fork = await cli(["fork", id, "--store", url.replace(/\/\/[^@/]*@/, `//${writer}@`), "--json"]);
    expect(fork.code, fork.stderr).toBe(0);
    expect((await rawPool(url).query("SELECT count(*)::int AS n FROM sessions")).rows).toEqual([{ n: 2 }]);
    await closeUrlStores();
  }, 60_000);

  it("TRANSCRIPT_STORE_PG_SCHEMA names the schema: written and read there, beside an app's own sessions table", async () => {
    const url = await freshDatabase();
    const db = rawPool(url);
    await db.query("CREATE TABLE sessions (sid serial PRIMARY KEY, user_name text NOT NULL)");
    const id = await oneSession(`${url}?schema=transcript_store`);
    const env = { TRANSCRIPT_STORE_URL: url, TRANSCRIPT_STORE_PG_SCHEMA: "transcript_store" };
    const ls = await cli(["ls", "/proj", "--json"], { env });
    expect(ls.code).toBe(0);
    expect(ls.records.map((r) => r.id)).toEqual([id]);
    // a writing command (fork) uses the schema too
    const fork = await cli(["fork", id, "--json"], { env });
    expect(fork.code, fork.stderr).toBe(0);
    expect((await db.query("SELECT count(*)::int AS n FROM transcript_store.sessions")).rows).toEqual([{ n: 2 }]);
    expect((await db.query("SELECT count(*)::int AS n FROM public.sessions")).rows).toEqual([{ n: 0 }]);
    const bad = await cli(["ls", "--json"], { env: { ...env, TRANSCRIPT_STORE_PG_SCHEMA: "Not-Valid" } });
    expect(bad.code).not.toBe(0);
    expect(bad.stdout + bad.stderr).toContain("INVALID_OPTION");
    await closeUrlStores();
  }, 60_000);
});
