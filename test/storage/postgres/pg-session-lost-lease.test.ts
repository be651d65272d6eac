import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend } from "../../../src/index.ts";
import { TranscriptStoreError } from "../../../src/errors.ts";
import type { PgStore } from "../../../src/storage/postgres/db/index.ts";
import { SessionManager } from "../../../src/session/session-manager.ts";
import { EntriesNotStored } from "../../../src/storage/postgres/pg-session.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";
import { tempDir } from "../../support/temp-dir.ts";
import { sha } from "../../support/sha.ts";

const opened: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of opened.splice(0)) await b.close();
});

async function backendAndStore(): Promise<{ backend: PostgresBackend; store: PgStore }> {
  const backend = PostgresBackend.of(await freshDatabase());
  opened.push(backend);
  return { backend, store: await backend.connect() };
}

/** Lets the lease of `id` expire and has another manager take it over. */
async function takeOver(backend: PostgresBackend, store: PgStore, id: string): Promise<SessionManager> {
  await store.pool.query("UPDATE sessions SET lease_expires = clock_timestamp() - interval '1 second' WHERE id = $1", [id]);
  return SessionManager.open(id, { store: backend, root: tempDir() });
}

const contents = (m: SessionManager) => m.getEntries().map((e) => (e.message as { content: string }).content);

/** The rows of a session as the entries they hold, compared with what its manager shows. */
async function storedLines(store: PgStore, id: string): Promise<string[]> {
  return (await store.loadSession(id)).entries.map((e) => e.line);
}

describe.skipIf(!pgCluster())("a PostgreSQL writer whose lease was taken over", () => {
  it("forks exactly what it shows: the entries it could not store go into the fork, so its next entry has its parent", async () => {
    const { backend, store } = await backendAndStore();
    const m = await SessionManager.create("/p", { store: backend, root: tempDir() });
    m.appendMessage({ role: "user", content: "kept" });
    await m.flush();
    const taker = await takeOver(backend, store, m.sessionId);
    m.appendMessage({ role: "user", content: "not stored" });
    await expect(m.flush()).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    const fork = await m.fork();
    expect(contents(fork)).toEqual(["kept", "not stored"]);
    fork.appendMessage({ role: "user", content: "next" });
    await fork.close();
    // before the fix: the fork's rows were ["kept", "next"], and "next" named a parent no row holds
    expect(await storedLines(store, fork.sessionId)).toEqual(fork.getEntries().map((e) => JSON.stringify(e)));
    await m.close().catch(() => {});
    await taker.close();
  });

  it("forks what it shows when the loss is found by the fork itself (entries still queued, never flushed)", async () => {
    const { backend, store } = await backendAndStore();
    const m = await SessionManager.create("/p", { store: backend, root: tempDir() });
    m.appendMessage({ role: "user", content: "kept" });
    await m.flush();
    const taker = await takeOver(backend, store, m.sessionId);
    m.appendMessage({ role: "user", content: "queued" });
    const fork = await m.fork();
    expect(await storedLines(store, fork.sessionId)).toEqual(fork.getEntries().map((e) => JSON.stringify(e)));
    expect(contents(fork)).toEqual(["kept", "queued"]);
    await fork.close();
    await m.close().catch(() => {});
    await taker.close();
  });

  it("close() rejects (SESSION_LOCKED) naming what was stored and what was not; a second close() resolves", async () => {
    const { backend, store } = await backendAndStore();
    const m = await SessionManager.create("/p", { store: backend, root: tempDir() });
    m.appendMessage({ role: "user", content: "kept" });
    await m.flush();
    const taker = await takeOver(backend, store, m.sessionId);
    const lost1 = m.appendMessage({ role: "user", content: "dropped 1" });
    const lost2 = m.appendMessage({ role: "user", content: "dropped 2" });
    // before the fix: close() resolved, and the two entries were gone without a word
    const err = await m.close().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: "SESSION_LOCKED" });
    const cause = (err as { cause: unknown }).cause;
    expect(cause).toBeInstanceOf(EntriesNotStored);
    expect(cause).toMatchObject({ storedThroughSeq: 1, notStored: [lost1, lost2] });
    expect(await storedLines(store, m.sessionId)).toHaveLength(1);
    await m.close(); // the session is closed; nothing more can be stored
    // what memory still shows can be rescued into a fork of its own
    const rescue = await m.fork();
    await rescue.close();
    expect(await storedLines(store, rescue.sessionId)).toEqual(rescue.getEntries().map((e) => JSON.stringify(e)));
    expect(contents(rescue)).toEqual(["kept", "dropped 1", "dropped 2"]);
    await taker.close();
  });

  it("a lazy session's rescue fork after a rejected close stores the images only its memory held", async () => {
    const { backend, store } = await backendAndStore();
    const m = await SessionManager.create("/p", { store: backend, root: tempDir(), rehydrate: "lazy" });
    m.appendMessage({ role: "user", content: "kept" });
    await m.flush();
    const taker = await takeOver(backend, store, m.sessionId);
    const png = randomBytes(3000);
    m.appendMessage({ role: "user", content: [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }] });
    await expect(m.close()).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    // before the fix: BLOB_MISSING (the lazy entry holds a ref; its bytes were never stored)
    const rescue = await m.fork();
    await rescue.close();
    expect(await storedLines(store, rescue.sessionId)).toHaveLength(2);
    const hash = sha(png);
    expect(await store.blobs.get(hash)).toEqual(png);
    const again = await SessionManager.open(rescue.sessionId, { store: backend, root: tempDir(), readOnly: true });
    const content = (again.getEntries()[1]!.message as { content: Array<{ data: string }> }).content;
    expect(content[0]!.data).toBe(png.toString("base64"));
    await again.close();
    await taker.close();
  });

  it("a move refused by the fence turns the writer read-only, as a refused append does, and moves nothing", async () => {
    const { backend, store } = await backendAndStore();
    const m = await SessionManager.create("/p", { store: backend, root: tempDir() });
    m.appendMessage({ role: "user", content: "kept" });
    await m.flush();
    const taker = await takeOver(backend, store, m.sessionId);
    await expect(m.moveTo("/elsewhere")).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    // before the fix: the manager stayed writable and took this append into memory
    expect(() => m.appendMessage({ role: "user", content: "after" })).toThrow(expect.objectContaining({ code: "READ_ONLY" }));
    expect(m.isReadOnly).toBe(true);
    expect((await store.getSession(m.sessionId))!.cwd).toBe("/p");
    await m.close();
    await taker.close();
  });

  it("close() counts as stored a batch whose commit went through although its reply was lost before the lease was", async () => {
    const { backend, store } = await backendAndStore();
    const m = await SessionManager.create("/p", { store: backend, root: tempDir() });
    m.appendMessage({ role: "user", content: "kept" });
    await m.flush();
    const original = store.appendBatch.bind(store);
    let taker: number | null = null;
    store.appendBatch = async (...args: Parameters<PgStore["appendBatch"]>) => {
      const result = await original(...args);
      if (taker === null) {
        await store.pool.query("UPDATE sessions SET lease_expires = clock_timestamp() - interval '1 second' WHERE id = $1", [m.sessionId]);
        taker = await store.leases.acquire(m.sessionId, "taker", 60_000);
        throw new TranscriptStoreError("PERSISTENCE_FAILED", "reply lost", { cause: new Error("Connection terminated unexpectedly") });
      }
      return result;
    };
    m.appendMessage({ role: "user", content: "committed, unconfirmed" });
    await expect(m.flush()).rejects.toMatchObject({ code: "SESSION_LOCKED" }); // the retry met the fence
    await m.close(); // the database holds both: nothing was lost
    expect(await storedLines(store, m.sessionId)).toEqual(m.getEntries().map((e) => JSON.stringify(e)));
  });

  it("a read-only manager forks what it shows, not rows another writer appended after it opened", async () => {
    const { backend, store } = await backendAndStore();
    const w = await SessionManager.create("/p", { store: backend, root: tempDir() });
    w.appendMessage({ role: "user", content: "seen" });
    await w.flush();
    const reader = await SessionManager.open(w.sessionId, { store: backend, root: tempDir(), readOnly: true });
    w.appendMessage({ role: "user", content: "unseen" });
    await w.close();
    const fork = await reader.fork();
    expect(contents(fork)).toEqual(["seen"]);
    // before the fix: the fork's rows held "unseen" too, which its memory did not show
    expect(await storedLines(store, fork.sessionId)).toEqual(fork.getEntries().map((e) => JSON.stringify(e)));
    await fork.close();
    await reader.close();
  });

  it("close() after a loss with nothing left unstored resolves", async () => {
    const { backend, store } = await backendAndStore();
    const m = await SessionManager.create("/p", { store: backend, root: tempDir() });
    m.appendMessage({ role: "user", content: "kept" });
    await m.flush();
    const taker = await takeOver(backend, store, m.sessionId);
    await m.close();
    expect(await storedLines(store, m.sessionId)).toHaveLength(1);
    await taker.close();
  });
});
