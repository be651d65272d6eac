import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend } from "../../../src/index.ts";
import { TranscriptStoreError } from "../../../src/errors.ts";
import type { PgStore } from "../../../src/storage/postgres/db/index.ts";
import { SessionManager } from "../../../src/session/session-manager.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";
import { tempDir } from "../../support/temp-dir.ts";

/** What a write whose COMMIT went through but whose reply was lost looks like to the writer. */
const replyLost = () =>
  new TranscriptStoreError("PERSISTENCE_FAILED", "the database connection failed (Connection terminated unexpectedly)", {
    cause: new Error("Connection terminated unexpectedly"),
  });

/** Makes the next `times` calls of `store[method]` commit and then report a lost connection. */
function commitThenLoseReply(
  store: PgStore,
  method: "appendBatch" | "createSessionWithRows" | "moveSession",
  times = 1,
): { calls: () => number } {
  const original = store[method].bind(store) as (...args: unknown[]) => Promise<unknown>;
  let calls = 0;
  (store as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
    calls++;
    const result = await original(...args);
    if (calls <= times) throw replyLost();
    return result;
  };
  return { calls: () => calls };
}

const opened: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of opened.splice(0)) await b.close();
});

async function backendAndStore(): Promise<{ backend: PostgresBackend; store: PgStore }> {
  const backend = PostgresBackend.of(await freshDatabase());
  opened.push(backend);
  return { backend, store: await backend.connect() };
}

describe.skipIf(!pgCluster())("PgSessionStorage across lost connections", () => {
  it("a batch whose commit reply was lost is retried by flush and stored once", async () => {
    const { backend, store } = await backendAndStore();
    const m = await SessionManager.create("/p", { store: backend, root: tempDir() });
    const fault = commitThenLoseReply(store, "appendBatch");
    for (let i = 0; i < 5; i++) m.appendMessage({ role: "user", content: `m${i}` });
    await m.flush();
    expect(fault.calls()).toBe(2);
    m.appendMessage({ role: "user", content: "m5" });
    await m.close();
    const { entries } = await store.loadSession(m.sessionId);
    expect(entries.map((e) => JSON.parse(e.line).message.content)).toEqual(["m0", "m1", "m2", "m3", "m4", "m5"]);
  });

  it("a deferred session whose creating commit reply was lost is created once and takes its appends", async () => {
    const { backend, store } = await backendAndStore();
    const m = await SessionManager.create("/p", { store: backend, root: tempDir(), deferUntilAssistant: true });
    const fault = commitThenLoseReply(store, "createSessionWithRows");
    m.appendMessage({ role: "user", content: "hello" });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "hi" }] });
    await m.flush(); // before the fix: "A session … already exists", at every flush
    expect(fault.calls()).toBe(1);
    m.appendMessage({ role: "user", content: "again" });
    await m.close();
    const { entries } = await store.loadSession(m.sessionId);
    expect(entries.map((e) => JSON.parse(e.line).message.role)).toEqual(["user", "assistant", "user"]);
    // the lease taken by the lost commit was found and released by close: the session opens for writing
    const again = await SessionManager.open(m.sessionId, { store: backend, root: tempDir() });
    await again.close();
  });

  it("a move whose commit reply was lost is retried (the same header: idempotent); memory and the row agree", async () => {
    const { backend, store } = await backendAndStore();
    const m = await SessionManager.create("/p", { store: backend, root: tempDir() });
    m.appendMessage({ role: "user", content: "m0" });
    await m.flush();
    const fault = commitThenLoseReply(store, "moveSession");
    await m.moveTo("/q"); // before the fix: PERSISTENCE_FAILED, memory at /p while the row was at /q
    expect(fault.calls()).toBe(2);
    expect(m.cwd).toBe("/q");
    expect((await store.getSession(m.sessionId))!.cwd).toBe("/q");
    m.appendMessage({ role: "user", content: "m1" });
    await m.close();
    expect(JSON.parse((await store.getSession(m.sessionId))!.header).cwd).toBe("/q");
  });

  it("a writer whose lease was taken over refuses to flush (SESSION_LOCKED), turns read-only, and can still fork", async () => {
    const { backend, store } = await backendAndStore();
    const root = tempDir();
    const m = await SessionManager.create("/p", { store: backend, root });
    m.appendMessage({ role: "user", content: "kept" });
    await m.flush();
    await store.pool.query("UPDATE sessions SET lease_expires = clock_timestamp() - interval '1 second' WHERE id = $1", [m.sessionId]);
    const taker = await SessionManager.open(m.sessionId, { store: backend, root });
    m.appendMessage({ role: "user", content: "refused" });
    await expect(m.flush()).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    expect(m.isReadOnly).toBe(true);
    await expect(m.flush()).rejects.toMatchObject({ code: "SESSION_LOCKED" }); // nothing queued: still nothing acknowledged
    const fork = await m.fork();
    expect(fork.getEntries().map((e) => (e.message as { content: string }).content)).toEqual(["kept", "refused"]);
    await fork.close();
    // the fork stored what it showed; the source's close still says that it could not store "refused"
    expect((await store.loadSession(fork.sessionId)).entries.map((e) => JSON.parse(e.line).message.content)).toEqual(["kept", "refused"]);
    await expect(m.close()).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    await taker.close();
    const { entries } = await store.loadSession(m.sessionId);
    expect(entries.map((e) => JSON.parse(e.line).message.content)).toEqual(["kept"]);
  });
});
