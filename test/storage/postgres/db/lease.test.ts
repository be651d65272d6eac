import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { pgCluster } from "../../../support/postgres.ts";
import { entryLine, freshStore, headerLine, rawPool } from "../../../support/pg-sessions.ts";

/** Expires a lease the way fs.utimes ages a lock: by setting its row, never by waiting. */
async function expire(url: string, id: string): Promise<void> {
  await rawPool(url).query("UPDATE sessions SET lease_expires = now() - interval '1 second' WHERE id = $1", [id]);
}

describe.skipIf(!pgCluster())("PostgreSQL session lease", () => {
  it("is refused to a second holder while held (SESSION_LOCKED) and on a missing session (SESSION_NOT_FOUND)", async () => {
    const { store } = await freshStore();
    const { session, token } = await store.createSession(headerLine(), { lease: { holder: "a", ttlMs: 60_000 } });
    expect(token).toBe(1);
    await expect(store.leases.acquire(session.id, "b", 60_000)).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    await expect(store.leases.acquire(randomUUID(), "b", 60_000)).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await expect(store.leases.acquire(session.id, "b", 0)).rejects.toMatchObject({ code: "INVALID_OPTION" });
  });

  it("is taken over only once expired, with a strictly greater token; the stale holder's append inserts nothing", async () => {
    const { store, url } = await freshStore();
    const { session, token: stale } = await store.createSession(headerLine(), { lease: { holder: "a", ttlMs: 60_000 } });
    await store.appendBatch(session.id, stale!, 1, [entryLine(1)]);
    await expire(url, session.id);
    const fresh = await store.leases.acquire(session.id, "b", 60_000);
    expect(fresh).toBeGreaterThan(stale!);

    await expect(store.appendBatch(session.id, stale!, 2, [entryLine(2)])).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    await expect(store.leases.renew(session.id, stale!, 60_000)).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    await expect(store.rewriteSession(session.id, stale!, headerLine(session.id), [])).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    await expect(store.moveSession(session.id, stale!, headerLine(session.id, "/elsewhere"))).rejects.toMatchObject({
      code: "SESSION_LOCKED",
    });
    await expect(store.deleteSession(session.id, stale!)).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    expect(await store.leases.release(session.id, stale!)).toBe(false);

    const db = rawPool(url);
    const rows = await db.query("SELECT seq::int, line FROM entries WHERE session_id = $1 ORDER BY seq", [session.id]);
    expect(rows.rows).toEqual([{ seq: 1, line: entryLine(1).line }]);
    const row = await db.query("SELECT cwd, last_seq::int, lease_holder FROM sessions WHERE id = $1", [session.id]);
    expect(row.rows).toEqual([{ cwd: "/home/demo/project", last_seq: 1, lease_holder: "b" }]);

    await store.appendBatch(session.id, fresh, 2, [entryLine(2)]);
    expect((await store.loadSession(session.id)).entries.map((e) => e.seq)).toEqual([1, 2]);
  });

  it("lets an expired holder that nobody replaced go on appending: its token is still the newest", async () => {
    const { store, url } = await freshStore();
    const { session, token } = await store.createSession(headerLine(), { lease: { holder: "a", ttlMs: 60_000 } });
    await expire(url, session.id);
    await store.appendBatch(session.id, token!, 1, [entryLine(1)]);
    await store.leases.renew(session.id, token!, 60_000);
    await expect(store.leases.acquire(session.id, "b", 60_000)).rejects.toMatchObject({ code: "SESSION_LOCKED" });
  });

  it("after release, refuses appends with the old token and gives the next holder a greater one", async () => {
    const { store } = await freshStore();
    const { session, token } = await store.createSession(headerLine(), { lease: { holder: "a", ttlMs: 60_000 } });
    expect(await store.leases.release(session.id, token!)).toBe(true);
    await expect(store.appendBatch(session.id, token!, 1, [entryLine(1)])).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    const next = await store.leases.acquire(session.id, "b", 60_000);
    expect(next).toBe(token! + 1);
  });
});
