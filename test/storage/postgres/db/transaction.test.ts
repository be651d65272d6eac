import { describe, expect, it } from "vitest";
import { TranscriptStoreError } from "../../../../src/errors.ts";
import { withTransaction } from "../../../../src/storage/postgres/db/transaction.ts";
import { pgCluster } from "../../../support/postgres.ts";
import { freshStore, rawPool } from "../../../support/pg-sessions.ts";

describe.skipIf(!pgCluster())("PostgreSQL transactions", () => {
  it("report the error that failed the transaction even when its connection is gone by ROLLBACK, and drop that connection", async () => {
    const { store, url } = await freshStore();
    const admin = rawPool(url);
    const pids = new Set<number>();
    const failed = withTransaction(store.pool, "Testing", async (client) => {
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      pids.add(rows[0]!.pid);
      await admin.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
      throw new TranscriptStoreError("SESSION_LOCKED", "refused inside the transaction");
    });
    await expect(failed).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    // the next transactions get live connections, never the dead one
    for (let i = 0; i < 12; i++) {
      const pid = await withTransaction(
        store.pool,
        "Testing",
        async (client) => (await client.query("SELECT pg_backend_pid() AS pid")).rows[0].pid,
      );
      expect(pids.has(pid)).toBe(false);
    }
  });

  it("roll back everything `fn` wrote when it throws, and return a clean connection to the pool", async () => {
    const { store, url } = await freshStore();
    await rawPool(url).query("CREATE TABLE t (x int)");
    const failed = withTransaction(store.pool, "Testing", async (client) => {
      await client.query("INSERT INTO t VALUES (1)");
      throw new TranscriptStoreError("SESSION_LOCKED", "refused");
    });
    await expect(failed).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    expect((await rawPool(url).query("SELECT count(*)::int AS n FROM t")).rows[0].n).toBe(0);
    await expect(withTransaction(store.pool, "Testing", (c) => c.query("SELECT 1"))).resolves.toBeDefined();
  });
});
