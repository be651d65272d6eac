import type pg from "pg";
import { describe, expect, it } from "vitest";
import { pgCluster } from "../../../support/postgres.ts";
import { blob, entryLine, freshStore, headerLine, rawPool } from "../../../support/pg-sessions.ts";

async function newSession(store: Awaited<ReturnType<typeof freshStore>>["store"]) {
  const { session, token } = await store.createSession(headerLine(), { lease: { holder: "w", ttlMs: 60_000 } });
  return { id: session.id, token: token! };
}

describe.skipIf(!pgCluster())("PostgreSQL appends and rewrites", () => {
  it("stores the exact lines in seq order with their blob rows and refs, and keeps the listing columns", async () => {
    const { store, url } = await freshStore();
    const { id, token } = await newSession(store);
    const png = blob("png bytes");
    const result = await store.appendBatch(id, token, 1, [entryLine(1), entryLine(2, [png.sha256]), entryLine(3)], [png]);
    expect(result).toEqual({ firstSeq: 1, lastSeq: 3, alreadyStored: 0 });
    const { session, entries } = await store.loadSession(id);
    expect(entries.map((e) => e.line)).toEqual([1, 2, 3].map((n) => entryLine(n, n === 2 ? [png.sha256] : []).line));
    expect(entries.map((e) => [e.seq, e.entryId, e.kind])).toEqual([
      [1, "00000001", "message"],
      [2, "00000002", "message"],
      [3, "00000003", "message"],
    ]);
    expect(session).toMatchObject({ lastSeq: 3, messageCount: 3, firstMessage: "message 1", header: headerLine(id) });
    const db = rawPool(url);
    expect((await db.query("SELECT sha256, bytes, size::int FROM blobs")).rows).toEqual([
      { sha256: png.sha256, bytes: Buffer.from(png.bytes), size: png.bytes.length },
    ]);
    expect((await db.query("SELECT session_id, sha256 FROM blob_refs")).rows).toEqual([{ session_id: id, sha256: png.sha256 }]);
  });

  it.each([
    { name: "a batch with a blob (transaction)", withBlob: true },
    { name: "a text batch (one statement)", withBlob: false },
  ])("writes $name all or nothing: a failure on its third line leaves no entry, blob, ref or session change", async ({ withBlob }) => {
    const { store, url } = await freshStore();
    const { id, token } = await newSession(store);
    await store.appendBatch(id, token, 1, [entryLine(1)]);
    const db = rawPool(url);
    await db.query(`CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.line LIKE '%message 4%' THEN RAISE EXCEPTION 'injected'; END IF; RETURN NEW; END $$`);
    await db.query("CREATE TRIGGER poison BEFORE INSERT ON entries FOR EACH ROW EXECUTE FUNCTION poison()");
    const png = blob("only in the failed batch");
    const batch = [entryLine(2), entryLine(3, withBlob ? [png.sha256] : []), entryLine(4)];
    const blobs = withBlob ? [png] : [];
    await expect(store.appendBatch(id, token, 2, batch, blobs)).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    expect((await db.query("SELECT seq::int FROM entries")).rows).toEqual([{ seq: 1 }]);
    expect((await db.query("SELECT count(*)::int AS n FROM blobs")).rows[0].n).toBe(0);
    expect((await db.query("SELECT count(*)::int AS n FROM blob_refs")).rows[0].n).toBe(0);
    expect((await store.getSession(id))!).toMatchObject({ lastSeq: 1, messageCount: 1 });
    // the batch is kept by the caller and retried once the fault is gone
    await db.query("DROP TRIGGER poison ON entries");
    expect(await store.appendBatch(id, token, 2, batch, blobs)).toEqual({ firstSeq: 2, lastSeq: 4, alreadyStored: 0 });
    expect((await store.getSession(id))!).toMatchObject({ lastSeq: 4, messageCount: 4 });
  });

  it("sends a text batch as one statement (one round trip), a batch with blobs as a transaction", async () => {
    const { store } = await freshStore();
    const { id, token } = await newSession(store);
    const sent: string[] = [];
    const seen = new WeakSet<object>();
    // the store types its pool as the subset it calls; the object is a pg.Pool
    (store.pool as pg.Pool).on("acquire", (client) => {
      if (seen.has(client)) return;
      seen.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        sent.push(
          String(typeof args[0] === "string" ? args[0] : (args[0] as { text: string }).text)
            .trim()
            .split(/\s+/)[0]!,
        );
        return query(...args);
      };
    });
    await store.appendBatch(id, token, 1, [entryLine(1), entryLine(2)]);
    expect(sent).toEqual(["WITH"]);
    sent.length = 0;
    const png = blob("png");
    await store.appendBatch(id, token, 3, [entryLine(3, [png.sha256])], [png]);
    expect(sent[0]).toBe("BEGIN");
    expect(sent.at(-1)).toBe("COMMIT");
  });

  it("sends a text batch's lines as one newline-joined text (no text[] literal), stored byte-exact, with an exact size", async () => {
    const { store, url } = await freshStore();
    const { id, token } = await newSession(store);
    const params: unknown[][] = [];
    const seen = new WeakSet<object>();
    (store.pool as pg.Pool).on("acquire", (client) => {
      if (seen.has(client)) return;
      seen.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        params.push(Array.isArray(args[1]) ? args[1] : []);
        return query(...args);
      };
    });
    // multi-byte text, quotes, backslashes, escapes a text[] literal must double: all exact, and the size counted in UTF-8 bytes
    const odd = (n: number, text: string) => {
      const line = JSON.stringify({ type: "message", id: `e${n}`, message: { role: "user", content: text } });
      return { line, entryId: `e${n}`, kind: "message" };
    };
    const batch = [odd(1, 'say "hi" \\ {a,b} NULL'), odd(2, "größe 日本語 😀 \u2028"), odd(3, "line\nbreak\ttab")];
    await store.appendBatch(id, token, 1, batch);
    expect(params).toHaveLength(1);
    const lineParams = params[0]!.filter((p) => typeof p === "string" && p.includes('"type":"message"'));
    expect(lineParams).toEqual([batch.map((l) => l.line).join("\n")]);
    expect(params[0]!.some((p) => Array.isArray(p) && p.some((x) => typeof x === "string" && x.startsWith("{")))).toBe(false);
    const db = rawPool(url);
    const stored = await db.query("SELECT seq::int, entry_id, line FROM entries WHERE session_id = $1 ORDER BY seq", [id]);
    expect(stored.rows).toEqual(batch.map((l, i) => ({ seq: i + 1, entry_id: l.entryId, line: l.line })));
    const bytes = batch.reduce((n, l) => n + Buffer.byteLength(l.line) + 1, 0);
    expect((await db.query("SELECT body_bytes::int AS b FROM sessions WHERE id = $1", [id])).rows[0].b).toBe(bytes);
    expect((await store.getSession(id))!.size).toBe(Buffer.byteLength(headerLine(id)) + 1 + bytes);
  });

  it("a batch holding a line with a raw newline, or an empty line, takes the transactional path and is stored exactly", async () => {
    const { store, url } = await freshStore();
    const { id, token } = await newSession(store);
    const lines = [entryLine(1), { line: '{"a":"raw\nnewline"}', entryId: "x", kind: "custom" }, { line: "", entryId: null, kind: null }];
    expect(await store.appendBatch(id, token, 1, lines)).toEqual({ firstSeq: 1, lastSeq: 3, alreadyStored: 0 });
    const db = rawPool(url);
    const stored = await db.query("SELECT line FROM entries WHERE session_id = $1 ORDER BY seq", [id]);
    expect(stored.rows.map((r) => r.line)).toEqual(lines.map((l) => l.line));
    const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l.line) + 1, 0);
    expect((await db.query("SELECT body_bytes::int AS b FROM sessions WHERE id = $1", [id])).rows[0].b).toBe(bytes);
  });

  it("inserts a batch's blob rows before its entries (an entry never sees its blob absent)", async () => {
    const { store, url } = await freshStore();
    const { id, token } = await newSession(store);
    const db = rawPool(url);
    await db.query("CREATE TABLE probe (seq bigint, blobs int)");
    await db.query(`CREATE FUNCTION probe() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO probe SELECT NEW.seq, count(*) FROM blobs; RETURN NEW; END $$`);
    await db.query("CREATE TRIGGER probe BEFORE INSERT ON entries FOR EACH ROW EXECUTE FUNCTION probe()");
    const a = blob("a");
    const b = blob("b");
    await store.appendBatch(id, token, 1, [entryLine(1, [a.sha256]), entryLine(2, [b.sha256])], [a, b]);
    expect((await db.query("SELECT seq::int, blobs FROM probe ORDER BY seq")).rows).toEqual([
      { seq: 1, blobs: 2 },
      { seq: 2, blobs: 2 },
    ]);
  });

  it("refuses a ref to a blob neither stored nor in the batch (BLOB_MISSING) and a malformed hash (INVALID_BLOB_REF)", async () => {
    const { store } = await freshStore();
    const { id, token } = await newSession(store);
    await expect(store.appendBatch(id, token, 1, [entryLine(1, ["a".repeat(64)])])).rejects.toMatchObject({ code: "BLOB_MISSING" });
    await expect(store.appendBatch(id, token, 1, [entryLine(1, ["../x"])])).rejects.toMatchObject({ code: "INVALID_BLOB_REF" });
    const wrong = { sha256: "b".repeat(64), bytes: Buffer.from("not those bytes") };
    await expect(store.appendBatch(id, token, 1, [entryLine(1)], [wrong])).rejects.toMatchObject({ code: "BLOB_CORRUPT" });
    expect((await store.loadSession(id)).entries).toEqual([]);
  });

  it("takes a retried batch (same seqs, after an ambiguous commit) as stored once, and refuses a different line or a gap", async () => {
    const { store, url } = await freshStore();
    const { id, token } = await newSession(store);
    const batch = [entryLine(1), entryLine(2)];
    await store.appendBatch(id, token, 1, batch);
    expect(await store.appendBatch(id, token, 1, batch)).toEqual({ firstSeq: 1, lastSeq: 2, alreadyStored: 2 });
    // overlapping: one stored, one new
    expect(await store.appendBatch(id, token, 2, [entryLine(2), entryLine(3)])).toEqual({ firstSeq: 2, lastSeq: 3, alreadyStored: 1 });
    await expect(store.appendBatch(id, token, 2, [entryLine(9)])).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    await expect(store.appendBatch(id, token, 5, [entryLine(5)])).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    const rows = await rawPool(url).query("SELECT seq::int FROM entries ORDER BY seq");
    expect(rows.rows.map((r) => r.seq)).toEqual([1, 2, 3]);
    expect((await store.getSession(id))!.messageCount).toBe(3);
  });

  it("rewrites header and entries at once: seqs renumbered, refs recomputed, old rows gone", async () => {
    const { store, url } = await freshStore();
    const { id, token } = await newSession(store);
    const a = blob("a");
    const b = blob("b");
    await store.appendBatch(id, token, 1, [entryLine(1, [a.sha256]), entryLine(2), entryLine(3)], [a]);
    const header = headerLine(id, "/home/demo/project", { title: "renamed" });
    const session = await store.rewriteSession(id, token, header, [entryLine(3), entryLine(7, [b.sha256])], [b]);
    expect(session).toMatchObject({ header, title: "renamed", lastSeq: 2, messageCount: 2, firstMessage: "message 3" });
    const { entries } = await store.loadSession(id);
    expect(entries.map((e) => [e.seq, e.line])).toEqual([
      [1, entryLine(3).line],
      [2, entryLine(7, [b.sha256]).line],
    ]);
    expect((await rawPool(url).query("SELECT sha256 FROM blob_refs")).rows).toEqual([{ sha256: b.sha256 }]);
    await expect(store.rewriteSession(id, token, headerLine(), [])).rejects.toMatchObject({ code: "BAD_HEADER" });
  });

  it("streams a session in seq order, a batch at a time, from one snapshot", async () => {
    const { store } = await freshStore();
    const { id, token } = await newSession(store);
    await store.appendBatch(
      id,
      token,
      1,
      Array.from({ length: 7 }, (_, i) => entryLine(i + 1)),
    );
    const sizes: number[] = [];
    const seqs: number[] = [];
    await store.readSession(
      id,
      async (batch) => {
        sizes.push(batch.length);
        seqs.push(...batch.map((e) => e.seq));
        // a write landing mid-read is not seen by this read
        if (sizes.length === 1) await store.appendBatch(id, token, 8, [entryLine(8)]);
      },
      { batchRows: 3 },
    );
    expect(sizes).toEqual([3, 3, 1]);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7]);
    await expect(store.loadSession("nope")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await expect(store.createSession('{"type":"message"}')).rejects.toMatchObject({ code: "BAD_HEADER" });
    await expect(store.createSession(headerLine(id))).rejects.toMatchObject({ code: "SESSION_EXISTS" });
  });
});
