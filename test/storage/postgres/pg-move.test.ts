import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../../src/index.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";

const backends: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
});

describe.skipIf(!pgCluster())("PostgreSQL moveTo is fenced by the lease", () => {
  it("a move after a takeover is refused (SESSION_LOCKED), changes nothing, and turns the manager read-only", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const store = await backend.connect();
    const m = await SessionManager.create("/fenced", { store: backend, lockStaleMs: 60_000 });
    m.appendMessage({ role: "user", content: "mine" });
    await m.flush();
    // another process takes the session over once the lease looks expired (this one was paused, say)
    await store.pool.query("UPDATE sessions SET lease_expires = now() - interval '1 second' WHERE id = $1", [m.sessionId]);
    const taker = await store.leases.acquire(m.sessionId, "taker", 60_000);
    await expect(m.moveTo("/stolen")).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    expect(m.isReadOnly).toBe(true);
    expect(m.cwd).toBe("/fenced");
    expect(() => m.appendMessage({ role: "user", content: "after" })).toThrow(expect.objectContaining({ code: "READ_ONLY" }));
    const row = (await store.getSession(m.sessionId))!;
    expect(row.cwd).toBe("/fenced");
    expect(JSON.parse(row.header).cwd).toBe("/fenced");
    expect(await store.leases.current(m.sessionId)).toEqual({ holder: "taker", token: taker });
    await m.close();
  });
});
