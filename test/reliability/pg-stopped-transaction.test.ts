import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PgStore } from "../../src/storage/postgres/db/index.ts";
import { onLines, spawnTs } from "../support/child.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { entryLine, headerLine, track } from "../support/pg-sessions.ts";

const CHILD = join(import.meta.dirname, "helpers", "pg-stopped-writer-child.ts");

/** Waits (polling the server's clock) until the lease of `sessionId` has expired. */
async function untilLeaseExpired(store: PgStore, sessionId: string): Promise<void> {
  for (;;) {
    const { rows } = await store.pool.query<{ expired: boolean }>(
      "SELECT lease_expires < clock_timestamp() AS expired FROM sessions WHERE id = $1",
      [sessionId],
    );
    if (rows[0]!.expired) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!pgCluster())("PostgreSQL: a writer SIGSTOPped inside its fenced transaction", () => {
  it("keeps no taker waiting past its lease, and resumed, neither commits nor appends (lost = 0, nothing after the takeover)", async () => {
    const url = await freshDatabase();
    const store = track(await PgStore.connect(url));
    const { session } = await store.createSession(headerLine());
    const id = session.id;
    const starter = await store.leases.acquire(id, "starter", 60_000);
    await store.appendBatch(id, starter, 1, [entryLine(1)]);
    await store.leases.release(id, starter);

    const child = spawnTs(CHILD, [url, id, "200"]);
    const lines: string[] = [];
    const waiters: Array<() => void> = [];
    onLines(child, (l) => {
      lines.push(l);
      for (const w of waiters.splice(0)) w();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const next = async (prefix: string) => {
      for (;;) {
        const found = lines.find((l) => l.startsWith(prefix));
        if (found !== undefined) return found;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    };
    try {
      const [, token, lastSeq] = (await next("fenced ")).split(" ").map(Number);
      child.kill("SIGSTOP"); // stopped holding the session row lock, inside its transaction
      await untilLeaseExpired(store, id); // a plain read: row locks do not block it
      // the taker's UPDATE waits on the stopped writer's row lock only until the server ends its idle transaction
      const taker = await store.leases.acquire(id, "taker", 60_000);
      expect(taker).toBe(token! + 1);
      expect(lastSeq).toBe(1);
      await store.appendBatch(id, taker, 2, [entryLine(2)]);
      child.kill("SIGCONT");
      expect(await next("insert ")).toBe("insert connection-lost");
      expect(await next("retry ")).toBe("retry SESSION_LOCKED");
      expect(await exited).toBe(0);
      const { entries } = await store.loadSession(id);
      expect(entries.map((e) => e.line)).toEqual([entryLine(1).line, entryLine(2).line]);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 60_000);
});
