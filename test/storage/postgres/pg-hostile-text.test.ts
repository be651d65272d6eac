import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend } from "../../../src/index.ts";
import { columnText } from "../../../src/storage/postgres/db/column-text.ts";
import { SessionManager } from "../../../src/session/session-manager.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";
import { freshStore, headerLine, rawPool } from "../../support/pg-sessions.ts";
import { tempDir } from "../../support/temp-dir.ts";

const opened: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of opened.splice(0)) await b.close();
});

/** Text PostgreSQL's `text` refuses (NUL) or a UTF-8 encoder cannot carry (lone surrogates). */
const HOSTILE = ["nul \u0000 inside", "high \ud800 alone", "low \udfff alone", "\u0000", "reversed \udc00\ud800 pair"];

describe.skipIf(!pgCluster())("PostgreSQL sessions holding text the database refuses in a column", () => {
  it.each(HOSTILE)("a user message %j is stored byte-exact and does not block the session", async (text) => {
    const backend = PostgresBackend.of(await freshDatabase());
    opened.push(backend);
    const store = await backend.connect();
    const m = await SessionManager.create("/p", { store: backend, root: tempDir() });
    m.appendMessage({ role: "user", content: text });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text }] });
    await m.flush(); // before the fix: PERSISTENCE_FAILED (invalid byte sequence 0x00), at every flush
    m.appendMessage({ role: "user", content: "after" });
    await m.close();
    const { entries } = await store.loadSession(m.sessionId);
    expect(entries.map((e) => e.line)).toEqual(m.getEntries().map((e) => JSON.stringify(e)));
    const again = await SessionManager.open(m.sessionId, { store: backend, root: tempDir(), readOnly: true });
    expect(again.getEntries().map((e) => e.message)).toEqual(m.getEntries().map((e) => e.message));
    const [info] = await SessionManager.list("/p", { store: backend, root: tempDir() });
    // the preview column holds U+FFFD for what it cannot hold; listing reads the exact text from the line
    expect((await store.getSession(m.sessionId))!.firstMessage).toBe(columnText(text));
    expect(info!.firstMessage).toBe(text);
    await again.close();
  });

  it("a header with such a cwd, title and parent stays exact, listed under its cwd; an entry id or kind with NUL is kept", async () => {
    const { store, url } = await freshStore();
    const id = randomUUID();
    const cwd = "/home/\u0000/\ud800";
    const header = headerLine(id, cwd, { title: "t\u0000\udfff", parentSession: "p\u0000" });
    const { token } = await store.createSession(header, { lease: { holder: "w", ttlMs: 60_000 } });
    const line = JSON.stringify({ type: "odd\u0000", id: "e\u0000\ud800", parentId: null, timestamp: "t" });
    await store.appendBatch(id, token!, 1, [{ line, entryId: "e\u0000\ud800", kind: "odd\u0000", firstMessage: "f\u0000" }]);
    const { session, entries } = await store.loadSession(id);
    expect(session.header).toBe(header);
    expect(entries.map((e) => e.line)).toEqual([line]);
    const listed = await store.listSessions({ cwd });
    // the columns hold U+FFFD; listing gives the header's exact text, and the line of the first message
    expect(listed.map((s) => [s.id, s.cwd, s.title, s.parentSession, s.firstMessage, s.firstMessageLine])).toEqual([
      [id, cwd, "t\u0000\udfff", "p\u0000", "f\ufffd", line],
    ]);
    const db = rawPool(url);
    expect((await db.query("SELECT cwd, title, parent_session FROM sessions")).rows).toEqual([
      { cwd: "/home/\ufffd/\ufffd", title: "t\ufffd\ufffd", parent_session: "p\ufffd" },
    ]);
    const moved = headerLine(id, "/else/\u0000", { title: "\ud800" });
    await store.moveSession(id, token!, moved);
    expect((await store.getSession(id))!.header).toBe(moved);
    expect((await store.listSessions({ cwd: "/else/\u0000" })).map((s) => [s.id, s.cwd, s.title])).toEqual([
      [id, "/else/\u0000", "\ud800"],
    ]);
    expect((await db.query("SELECT entry_id, kind FROM entries")).rows).toEqual([{ entry_id: "e\ufffd\ufffd", kind: "odd\ufffd" }]);
  });

  it.each(['{"raw":"\u0000"}', '{"raw":"\ud800"}'])(
    "a line holding %j raw (not escaped) is refused before anything is stored",
    async (line) => {
      const { store, url } = await freshStore();
      const id = randomUUID();
      const { token } = await store.createSession(headerLine(id), { lease: { holder: "w", ttlMs: 60_000 } });
      // before the fix: the NUL failed in the database; the surrogate was stored as U+FFFD, silently
      await expect(store.appendBatch(id, token!, 1, [{ line, entryId: "e", kind: "odd" }])).rejects.toMatchObject({
        code: "PERSISTENCE_FAILED",
      });
      expect((await rawPool(url).query("SELECT count(*)::int AS n FROM entries")).rows).toEqual([{ n: 0 }]);
    },
  );

  it.each(["-100000-01-01T00:00:00.000Z", "-004713-01-01T00:00:00.000Z"])(
    "a header timestamp %s, before what timestamptz holds, is stored: created falls back to the time of the insert",
    async (timestamp) => {
      const { store } = await freshStore();
      const id = randomUUID();
      const header = headerLine(id, "/p", { timestamp });
      const before = Date.now();
      // before the fix: PERSISTENCE_FAILED (timestamp out of range), at every attempt
      const { session } = await store.createSession(header);
      expect(session.header).toBe(header);
      expect(session.created.getTime()).toBeGreaterThan(before - 60_000);
      const { token } = await store.forkSession(id, headerLine(randomUUID(), "/q", { timestamp }), {
        lease: { holder: "f", ttlMs: 60_000 },
      });
      expect(token).not.toBeNull();
    },
  );

  it("two cwds that the cwd column holds alike are listed and resolved apart", async () => {
    const { store } = await freshStore();
    const [a, b] = [randomUUID(), randomUUID()];
    await store.createSession(headerLine(a, "/c\u0000"));
    await store.createSession(headerLine(b, "/c\ud800"));
    expect((await store.listSessions({ cwd: "/c\u0000" })).map((s) => s.id)).toEqual([a]);
    expect((await store.listSessions({ cwd: "/c\ud800" })).map((s) => s.id)).toEqual([b]);
    expect((await store.resolveSession(b.slice(0, 8), { cwd: "/c\u0000" }).catch((e) => e)).code).toBe("SESSION_NOT_FOUND");
    expect((await store.resolveSession(a.slice(0, 8), { cwd: "/c\u0000" })).id).toBe(a);
  });

  it.each(["a\u0000b", "a\ud800b"])("a session id %j is refused (BAD_HEADER) before anything is stored", async (id) => {
    const { store, url } = await freshStore();
    await expect(store.createSession(headerLine(id))).rejects.toMatchObject({ code: "BAD_HEADER" });
    const raw = `{"type":"session","version":3,"id":"${randomUUID()}","cwd":"/\ud800"}`; // not escaped: JSON.parse takes it
    await expect(store.createSession(raw)).rejects.toMatchObject({ code: "BAD_HEADER" });
    expect((await rawPool(url).query("SELECT count(*)::int AS n FROM sessions")).rows).toEqual([{ n: 0 }]);
  });
});
