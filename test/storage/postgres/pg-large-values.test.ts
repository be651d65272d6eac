import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend } from "../../../src/index.ts";
import type { PgLimits } from "../../../src/storage/postgres/db/index.ts";
import { SessionManager } from "../../../src/session/session-manager.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";
import { tempDir } from "../../support/temp-dir.ts";
import { sha } from "../../support/sha.ts";

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** The largest parameters any statement sent: one Buffer, the Buffers of one array, the characters of one string array. */
interface Sent {
  buffer: number;
  bufferArray: number;
  textArray: number;
}

/** A backend with small limits over a pool that records the size of every parameter it sends. */
async function recordingBackend(limits: Partial<PgLimits>): Promise<{ backend: PostgresBackend; sent: Sent; pool: pg.Pool }> {
  const sent: Sent = { buffer: 0, bufferArray: 0, textArray: 0 };
  const pool = new pg.Pool({ connectionString: await freshDatabase(), max: 4 });
  pool.on("error", () => {});
  pool.on("connect", (client) => {
    client.on("error", () => {});
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: unknown }).query = (text: unknown, values?: unknown, ...rest: unknown[]) => {
      for (const v of Array.isArray(values) ? values : []) {
        if (Buffer.isBuffer(v)) sent.buffer = Math.max(sent.buffer, v.byteLength);
        if (Array.isArray(v) && v.some((x) => Buffer.isBuffer(x))) {
          sent.bufferArray = Math.max(
            sent.bufferArray,
            v.reduce((n: number, x: Buffer | null) => n + (x?.byteLength ?? 0), 0),
          );
        }
        if (Array.isArray(v) && v.some((x) => typeof x === "string")) {
          sent.textArray = Math.max(
            sent.textArray,
            v.reduce((n: number, x: string | null) => n + (x?.length ?? 0), 0),
          );
        }
      }
      return query(text, values, ...rest);
    };
  });
  const backend = PostgresBackend.of(pool, { limits });
  cleanup.push(async () => {
    await backend.close();
    await pool.end();
  });
  return { backend, sent, pool };
}

const image = (bytes: Buffer) => ({ type: "image" as const, data: bytes.toString("base64"), mimeType: "image/png" });

describe.skipIf(!pgCluster())("PostgreSQL values larger than one statement should carry", () => {
  it("an entry whose images exceed a statement's share is sent one blob group or part at a time and reads back byte-exact", async () => {
    const limits = { blobPartBytes: 16 * 1024, arrayChars: 8 * 1024 };
    const { backend, sent, pool } = await recordingBackend(limits);
    const images = [randomBytes(40 * 1024 + 7), randomBytes(3000), randomBytes(5000), randomBytes(16 * 1024)];
    const m = await SessionManager.create("/p", { store: backend, root: tempDir() });
    m.appendMessage({ role: "user", content: [{ type: "text", text: "look" }, ...images.map(image)] });
    m.appendMessage({ role: "user", content: "x".repeat(20 * 1024) }); // a line longer than one text[] may carry
    for (let i = 0; i < 10; i++) m.appendMessage({ role: "user", content: `short ${i} ${"y".repeat(1000)}` });
    await m.close();
    // before the fix: the batch's four images went as one bytea[] of 64 KiB, the lines as one text[]
    expect(sent.bufferArray).toBe(0);
    expect(sent.buffer).toBeLessThanOrEqual(limits.blobPartBytes);
    expect(sent.textArray).toBeLessThanOrEqual(limits.arrayChars);
    const { rows } = await pool.query("SELECT sha256, size::int, encode(sha256(bytes), 'hex') AS actual FROM blobs ORDER BY size");
    expect(rows).toEqual([...images].sort((a, b) => a.length - b.length).map((b) => ({ sha256: sha(b), size: b.length, actual: sha(b) })));
    const again = await SessionManager.open(m.sessionId, { store: backend, root: tempDir(), readOnly: true });
    expect(again.getEntries()).toEqual(m.getEntries());
    const data = (again.getEntries()[0]!.message as { content: Array<{ data?: string }> }).content.slice(1).map((c) => c.data);
    expect(data).toEqual(images.map((b) => b.toString("base64")));
    await again.close();
    // the blob API takes the same paths: a blob larger than a part is put and read in parts
    const big = randomBytes(50 * 1024);
    const put = await again.blobs.put(big);
    expect(put.existed).toBe(false);
    expect(await again.blobs.put(big)).toMatchObject({ existed: true });
    expect(await again.blobs.get(put.hash)).toEqual(big);
    expect(sent.buffer).toBeLessThanOrEqual(limits.blobPartBytes);
  });

  it("a deferred session's first commit (its row and first rows in one transaction) sends blobs and lines the same way", async () => {
    const limits = { blobPartBytes: 16 * 1024, arrayChars: 8 * 1024 };
    const { backend, sent, pool } = await recordingBackend(limits);
    const images = [randomBytes(40 * 1024 + 7), randomBytes(3000)];
    const m = await SessionManager.create("/p", { store: backend, root: tempDir(), deferUntilAssistant: true });
    m.appendMessage({ role: "user", content: [{ type: "text", text: "look" }, ...images.map(image)] });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "z".repeat(20 * 1024) }] });
    await m.close();
    expect(sent.bufferArray).toBe(0);
    expect(sent.buffer).toBeLessThanOrEqual(limits.blobPartBytes);
    expect(sent.textArray).toBeLessThanOrEqual(limits.arrayChars);
    const { rows } = await pool.query("SELECT sha256, size::int, encode(sha256(bytes), 'hex') AS actual FROM blobs ORDER BY size");
    expect(rows).toEqual([...images].sort((a, b) => a.length - b.length).map((b) => ({ sha256: sha(b), size: b.length, actual: sha(b) })));
    const again = await SessionManager.open(m.sessionId, { store: backend, root: tempDir(), readOnly: true });
    expect(again.getEntries()).toEqual(m.getEntries());
    await again.close();
  });

  it("an entry too large for one row is refused at append, out of memory, and the entries after it are stored", async () => {
    const { backend, pool } = await recordingBackend({ maxLineBytes: 64 * 1024, maxBlobBytes: 32 * 1024 });
    const m = await SessionManager.create("/p", { store: backend, root: tempDir() });
    m.appendMessage({ role: "user", content: "before" });
    expect(() => m.appendMessage({ role: "user", content: "z".repeat(70 * 1024) })).toThrow(
      expect.objectContaining({ code: "PERSISTENCE_FAILED" }),
    );
    expect(() => m.appendMessage({ role: "user", content: [image(randomBytes(33 * 1024))] })).toThrow(
      expect.objectContaining({ code: "PERSISTENCE_FAILED" }),
    );
    m.appendMessage({ role: "user", content: "after" });
    await m.close();
    expect(m.getEntries().map((e) => (e.message as { content: string }).content)).toEqual(["before", "after"]);
    const { rows } = await pool.query("SELECT line FROM entries ORDER BY seq");
    expect(rows.map((r) => r.line)).toEqual(m.getEntries().map((e) => JSON.stringify(e)));
    expect((await pool.query("SELECT count(*)::int AS n FROM blobs")).rows).toEqual([{ n: 0 }]);
  });

  it("a deferred session refuses such an entry at its own append; the entries kept back with it are stored at the answer", async () => {
    const { backend, pool } = await recordingBackend({ maxLineBytes: 64 * 1024 });
    const m = await SessionManager.create("/p", { store: backend, root: tempDir(), deferUntilAssistant: true });
    m.appendMessage({ role: "user", content: "question" });
    // before the fix: taken into memory, then every assistant append threw and the session was never created
    expect(() => m.appendMessage({ role: "user", content: "z".repeat(70 * 1024) })).toThrow(
      expect.objectContaining({ code: "PERSISTENCE_FAILED" }),
    );
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "answer" }] });
    await m.close();
    const { rows } = await pool.query("SELECT line FROM entries ORDER BY seq");
    expect(rows.map((r) => r.line)).toEqual(m.getEntries().map((e) => JSON.stringify(e)));
    expect(rows).toHaveLength(2);
  });

  // The one test at the real limits (heavy: ~2 GB of memory, tens of seconds): the others inject small ones.
  it("an entry holding 270 MiB of images commits at the real limits, reads back byte-exact; the entries after it commit", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    cleanup.push(() => backend.close());
    const big = randomBytes(270 * 1024 * 1024);
    const m = await SessionManager.create("/p", { store: backend, root: tempDir() });
    m.appendMessage({ role: "user", content: [image(big), image(randomBytes(1000))] });
    m.appendMessage({ role: "user", content: "after" });
    // before the fix: PERSISTENCE_FAILED at every flush (the batch's blobs as one bytea[]: a string over V8's limit),
    // and "after" was never stored
    await m.close();
    const store = await backend.connect();
    const { rows } = await store.pool.query(
      "SELECT size::float8 AS size, encode(sha256(bytes), 'hex') AS actual FROM blobs ORDER BY size DESC",
    );
    expect(rows).toEqual([
      { size: big.length, actual: sha(big) },
      { size: 1000, actual: expect.any(String) },
    ]);
    expect((await store.loadSession(m.sessionId)).entries).toHaveLength(2);
    const again = await SessionManager.open(m.sessionId, { store: backend, root: tempDir(), readOnly: true });
    const first = (again.getEntries()[0]!.message as { content: Array<{ data: string }> }).content[0]!.data;
    expect(first.length).toBe(Math.ceil(big.length / 3) * 4);
    expect(Buffer.from(first, "base64").equals(big)).toBe(true);
    await again.close();
  }, 300_000);

  it("refuses limits that are not positive integers up to the defaults (INVALID_OPTION)", async () => {
    const url = await freshDatabase();
    for (const limits of [{ blobPartBytes: 0 }, { arrayChars: 1.5 }, { maxLineBytes: 2 ** 31 }]) {
      await expect(PostgresBackend.of(url, { limits }).connect()).rejects.toMatchObject({ code: "INVALID_OPTION" });
    }
  });
});
