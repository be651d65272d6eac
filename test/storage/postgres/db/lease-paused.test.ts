import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgStore } from "../../../../src/storage/postgres/db/index.ts";
import { fenceSession } from "../../../../src/storage/postgres/db/lease.ts";
import { isConnectionError } from "../../../../src/storage/postgres/db/pg-errors.ts";
import { freshDatabase, pgCluster } from "../../../support/postgres.ts";

const header = (id: string) => JSON.stringify({ type: "session", version: 3, id, timestamp: new Date(0).toISOString(), cwd: "/p" });

describe.skipIf(!pgCluster())("fenced transactions and the lease", () => {
  let store: PgStore;
  beforeAll(async () => {
    store = await PgStore.connect(await freshDatabase());
  });
  afterAll(async () => {
    await store?.close();
  });

  it("a writer paused in a fenced transaction keeps no taker waiting past its lease; its next statement is a lost connection", async () => {
    const id = "0190aaaa-0000-7000-8000-000000000001";
    await store.createSession(header(id));
    const token = await store.leases.acquire(id, "paused", 1); // a lease that ends at once
    const paused = await store.pool.connect();
    paused.on("error", () => {});
    try {
      await paused.query("BEGIN");
      await fenceSession(paused, id, token, "Appending entries"); // the session row is locked; then the writer stops
      // The taker waits on the row lock only until the server ends the idle transaction (before the fix: forever).
      const next = await store.leases.acquire(id, "taker", 60_000);
      expect(next).toBe(token + 1);
      const late = await paused.query("SELECT 1").then(
        () => null,
        (err: unknown) => err,
      );
      expect(late).not.toBeNull();
      expect(isConnectionError(late)).toBe(true);
    } finally {
      paused.release(true);
    }
  }, 30_000);
});
