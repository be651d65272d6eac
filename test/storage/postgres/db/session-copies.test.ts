import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { pgCluster } from "../../../support/postgres.ts";
import { blob, entryLine, freshStore, headerLine, rawPool } from "../../../support/pg-sessions.ts";

describe.skipIf(!pgCluster())("PostgreSQL fork, move, list, resolve, delete, artifacts", () => {
  it("forks server-side: the same lines, refs and artifacts under a new id, whole or up to a seq", async () => {
    const { store, url } = await freshStore();
    const { session, token } = await store.createSession(headerLine(), { lease: { holder: "w", ttlMs: 60_000 } });
    const png = blob("png");
    const lines = [entryLine(1), entryLine(2, [png.sha256]), entryLine(3)];
    await store.appendBatch(session.id, token!, 1, lines, [png]);
    await store.artifacts.put(session.id, "3.log", "tool output", { toolType: "bash" });

    const whole = headerLine(randomUUID(), "/home/demo/project", { parentSession: session.id });
    const fork = await store.forkSession(session.id, whole, { lease: { holder: "f", ttlMs: 60_000 } });
    expect(fork.token).toBe(1);
    expect(fork.session).toMatchObject({
      header: whole,
      parentSession: session.id,
      lastSeq: 3,
      messageCount: 3,
      firstMessage: "message 1",
    });
    const loaded = await store.loadSession(fork.session.id);
    expect(loaded.entries.map((e) => e.line)).toEqual(lines.map((l) => l.line));
    expect(await store.artifacts.get(fork.session.id, "3.log")).toMatchObject({
      content: Buffer.from("tool output"),
      meta: { toolType: "bash" },
    });
    expect((await rawPool(url).query("SELECT sha256 FROM blob_refs WHERE session_id = $1", [fork.session.id])).rows).toEqual([
      { sha256: png.sha256 },
    ]);
    await store.appendBatch(fork.session.id, fork.token!, 4, [entryLine(4)]);
    expect((await store.getSession(session.id))!.lastSeq).toBe(3);

    const partial = await store.forkSession(session.id, headerLine(), { uptoSeq: 2 });
    expect(partial.token).toBeNull();
    expect(partial.session).toMatchObject({ lastSeq: 2, messageCount: 2 });
    expect((await store.loadSession(partial.session.id)).entries.map((e) => e.seq)).toEqual([1, 2]);
    const empty = await store.forkSession(session.id, headerLine(), { uptoSeq: 0 });
    expect(empty.session).toMatchObject({ lastSeq: 0, messageCount: 0, firstMessage: null });
    await expect(store.forkSession(session.id, headerLine(), { uptoSeq: 4 })).rejects.toMatchObject({ code: "ENTRY_NOT_FOUND" });
    await expect(store.forkSession(randomUUID(), headerLine())).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
  });

  it("creating, forking or importing onto an id the database holds is SESSION_EXISTS, and changes no row", async () => {
    const { store, url } = await freshStore();
    const { session, token } = await store.createSession(headerLine(), { lease: { holder: "w", ttlMs: 60_000 } });
    await store.appendBatch(session.id, token!, 1, [entryLine(1)]);
    const taken = headerLine(session.id, "/elsewhere");
    const db = rawPool(url);
    const rows = async () => (await db.query("SELECT id, cwd, header, last_seq::int FROM sessions ORDER BY id")).rows;
    const before = await rows();
    await expect(store.createSession(taken)).rejects.toMatchObject({ code: "SESSION_EXISTS" });
    await expect(store.createSessionWithRows(taken, [{ lines: [entryLine(1)], blobs: [] }])).rejects.toMatchObject({
      code: "SESSION_EXISTS",
    });
    await expect(store.forkSession(session.id, taken)).rejects.toMatchObject({ code: "SESSION_EXISTS" });
    const source = { header: taken, batches: () => [{ lines: [entryLine(1)], blobs: [] }], bytesOf: () => null };
    await expect(store.importSession(source, null)).rejects.toMatchObject({ code: "SESSION_EXISTS" });
    expect(await rows()).toEqual(before);
    expect((await db.query("SELECT count(*)::int AS n FROM entries")).rows[0].n).toBe(1);
    await db.end();
  });

  it("moves a session to another cwd in one transaction: listing follows, entries and artifacts stay", async () => {
    const { store } = await freshStore();
    const { session, token } = await store.createSession(headerLine(randomUUID(), "/a"), { lease: { holder: "w", ttlMs: 60_000 } });
    await store.appendBatch(session.id, token!, 1, [entryLine(1)]);
    await store.artifacts.put(session.id, "1.txt", "x");
    const moved = await store.moveSession(session.id, token!, headerLine(session.id, "/b"));
    expect(moved).toMatchObject({ cwd: "/b", header: headerLine(session.id, "/b"), lastSeq: 1 });
    expect(await store.listSessions({ cwd: "/a" })).toEqual([]);
    expect((await store.listSessions({ cwd: "/b" })).map((s) => s.id)).toEqual([session.id]);
    expect((await store.artifacts.list(session.id)).map((a) => a.id)).toEqual(["1.txt"]);
    await expect(store.moveSession(session.id, token!, headerLine(randomUUID(), "/c"))).rejects.toMatchObject({ code: "BAD_HEADER" });
  });

  it("lists newest first, per cwd or all, and resolves an id prefix (exact id wins; ambiguous and missing refused)", async () => {
    const { store, url } = await freshStore();
    const ids = ["0197aaaa-0000-7000-8000-000000000001", "0197aaaa-0000-7000-8000-000000000002", "0197bbbb-0000-7000-8000-000000000003"];
    for (const [i, id] of ids.entries()) await store.createSession(headerLine(id, i < 2 ? "/p" : "/q"));
    const db = rawPool(url);
    for (const [i, id] of ids.entries()) {
      await db.query("UPDATE sessions SET modified = timestamptz '2026-01-01' + $2 * interval '1 hour' WHERE id = $1", [id, i]);
    }
    expect((await store.listSessions()).map((s) => s.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect((await store.listSessions({ cwd: "/p" })).map((s) => s.id)).toEqual([ids[1], ids[0]]);
    expect((await store.listSessions({ limit: 1 })).map((s) => s.id)).toEqual([ids[2]]);
    expect((await store.resolveSession("0197bb")).id).toBe(ids[2]);
    expect((await store.resolveSession(ids[0]!)).id).toBe(ids[0]);
    await expect(store.resolveSession("0197aaaa")).rejects.toMatchObject({ code: "SESSION_AMBIGUOUS" });
    expect((await store.resolveSession("0197aaaa", { cwd: "/p" }).catch((e) => e)).code).toBe("SESSION_AMBIGUOUS");
    await expect(store.resolveSession("0197bb", { cwd: "/p" })).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await expect(store.resolveSession("0197%")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await expect(store.resolveSession("")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
  });

  it("deletes a session with its entries, refs and artifacts under its lease; its blobs stay for gc", async () => {
    const { store, url } = await freshStore();
    const { session, token } = await store.createSession(headerLine(), { lease: { holder: "w", ttlMs: 60_000 } });
    const png = blob("png");
    await store.appendBatch(session.id, token!, 1, [entryLine(1, [png.sha256])], [png]);
    await store.artifacts.put(session.id, "a", "x");
    await store.deleteSession(session.id, token!);
    const db = rawPool(url);
    for (const table of ["sessions", "entries", "blob_refs", "artifacts"]) {
      expect((await db.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(0);
    }
    expect(await store.blobs.has(png.sha256)).toBe(true);
  });

  it("keeps artifacts as rows of their session: put, replace, get, list, delete; ids validated", async () => {
    const { store } = await freshStore();
    const { session } = await store.createSession(headerLine());
    await store.artifacts.put(session.id, "1.bash.log", Buffer.from([0, 1, 2]));
    await store.artifacts.put(session.id, "1.bash.log", "replaced", { lines: 1 });
    expect(await store.artifacts.get(session.id, "1.bash.log")).toMatchObject({
      content: Buffer.from("replaced"),
      size: 8,
      meta: { lines: 1 },
    });
    expect((await store.artifacts.list(session.id)).map((a) => [a.id, a.size])).toEqual([["1.bash.log", 8]]);
    expect(await store.artifacts.delete(session.id, "1.bash.log")).toBe(true);
    expect(await store.artifacts.delete(session.id, "1.bash.log")).toBe(false);
    expect(await store.artifacts.get(session.id, "1.bash.log")).toBeNull();
    await expect(store.artifacts.put(session.id, "../x", "y")).rejects.toMatchObject({ code: "INVALID_ARTIFACT_ID" });
    await expect(store.artifacts.put(randomUUID(), "a", "y")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
  });
});
