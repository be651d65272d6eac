import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withClient, withTransaction } from "../../../../src/storage/postgres/db/transaction.ts";
import { freshDatabase, pgCluster } from "../../../support/postgres.ts";

describe.skipIf(!pgCluster())("withTransaction / withClient: a connection cut while checked out", () => {
  let pool: pg.Pool;
  let killer: pg.Pool;
  beforeAll(async () => {
    const url = await freshDatabase();
    pool = new pg.Pool({ connectionString: url, max: 2 });
    pool.on("error", () => {});
    killer = new pg.Pool({ connectionString: url, max: 1 });
  });
  afterAll(async () => {
    await pool?.end();
    await killer?.end();
  });

  /** Ends the server side of `client`'s connection and waits until the client saw it end. */
  async function cut(client: pg.PoolClient): Promise<void> {
    const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    const ended = new Promise((resolve) => client.once("end", resolve));
    await killer.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
    await ended;
  }

  for (const [name, run] of [
    ["withTransaction", withTransaction],
    ["withClient", withClient],
  ] as const) {
    it(`${name}: a connection cut while checked out is PERSISTENCE_FAILED to the caller, not an unhandled error event`, async () => {
      const attempt = run(pool, "Testing a cut connection", async (client) => {
        // the store's own client type is the subset it calls; the object is pg's
        await cut(client as pg.PoolClient);
        return client.query("SELECT 1");
      });
      await expect(attempt).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
      // the pool dropped the dead connection: the next call gets a working one
      const { rows } = await withClient(pool, "Reading after the cut", (client) => client.query<{ one: number }>("SELECT 1 AS one"));
      expect(rows[0]!.one).toBe(1);
    });
  }
});
