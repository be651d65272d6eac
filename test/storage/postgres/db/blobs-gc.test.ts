import { describe, expect, it } from "vitest";
import { pgCluster } from "../../../support/postgres.ts";
import { blob, entryLine, freshStore, headerLine, rawPool } from "../../../support/pg-sessions.ts";

/** Ages blobs the way fs.utimes ages files: by setting `touched`, never by waiting. */
async function age(url: string, hashes: string[]): Promise<void> {
  await rawPool(url).query("UPDATE blobs SET touched = now() - interval '2 hours' WHERE sha256 = ANY($1)", [hashes]);
}

describe.skipIf(!pgCluster())("PostgreSQL blobs and gc", () => {
  it("puts idempotently by content hash, gets (verified), lists, and deletes only unreferenced blobs", async () => {
    const { store, url } = await freshStore();
    const a = blob("a");
    expect(await store.blobs.put(a.bytes)).toBe(a.sha256);
    expect(await store.blobs.put(a.bytes)).toBe(a.sha256);
    expect(await store.blobs.store(a.bytes)).toEqual({ hash: a.sha256, existed: true });
    expect(await store.blobs.store(blob("fresh").bytes)).toEqual({ hash: blob("fresh").sha256, existed: false });
    await store.blobs.delete(blob("fresh").sha256);
    expect(await store.blobs.get(`blob:sha256:${a.sha256}`, { verify: true })).toEqual(Buffer.from(a.bytes));
    expect(await store.blobs.get("c".repeat(64))).toBeNull();
    expect(await store.blobs.has(a.sha256)).toBe(true);
    expect(await store.blobs.list()).toEqual([a.sha256]);
    await expect(store.blobs.get("../../etc/passwd")).rejects.toMatchObject({ code: "INVALID_BLOB_REF" });
    await rawPool(url).query("UPDATE blobs SET bytes = 'x'::bytea");
    await expect(store.blobs.get(a.sha256, { verify: true })).rejects.toMatchObject({ code: "BLOB_CORRUPT" });

    const { session, token } = await store.createSession(headerLine(), { lease: { holder: "w", ttlMs: 60_000 } });
    const b = blob("b");
    await store.blobs.put(b.bytes);
    await store.appendBatch(session.id, token!, 1, [entryLine(1, [b.sha256])]);
    expect(await store.blobs.delete(b.sha256)).toBe(false);
    expect(await store.blobs.delete(a.sha256)).toBe(true);
    expect(await store.blobs.list()).toEqual([b.sha256]);
  });

  it("collects only unreferenced blobs older than the grace period; a dry run deletes nothing", async () => {
    const { store, url } = await freshStore();
    const { session, token } = await store.createSession(headerLine(), { lease: { holder: "w", ttlMs: 60_000 } });
    const [kept, old, young] = [blob("referenced"), blob("old"), blob("young")];
    await store.appendBatch(session.id, token!, 1, [entryLine(1, [kept.sha256])], [kept]);
    await store.blobs.put(old.bytes);
    await store.blobs.put(young.bytes);
    await age(url, [kept.sha256, old.sha256]);
    expect(await store.gc({ dryRun: true })).toEqual({ deleted: [old.sha256], bytes: 3 });
    expect((await store.blobs.list()).length).toBe(3);
    expect(await store.gc({ batch: 1 })).toEqual({ deleted: [old.sha256], bytes: 3 });
    expect((await store.blobs.list()).sort()).toEqual([kept.sha256, young.sha256].sort());
    // a re-put refreshes the grace period of an old blob
    await age(url, [young.sha256]);
    await store.blobs.put(young.bytes);
    expect((await store.gc()).deleted).toEqual([]);
  });

  it("never deletes an old unreferenced blob that a writer is referencing in a transaction still open", async () => {
    const { store, url } = await freshStore();
    const { session, token } = await store.createSession(headerLine(), { lease: { holder: "w", ttlMs: 60_000 } });
    const shared = blob("stored long ago, referenced now");
    await store.blobs.put(shared.bytes);
    await age(url, [shared.sha256]);
    // hold the writer inside its transaction after it locked its blobs, before its entries and refs
    const db = rawPool(url);
    await db.query(`CREATE FUNCTION hold() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_lock_shared(4242); PERFORM pg_advisory_unlock_shared(4242); RETURN NEW; END $$`);
    await db.query("CREATE TRIGGER hold BEFORE INSERT ON entries FOR EACH ROW EXECUTE FUNCTION hold()");
    const gate = await db.connect();
    await gate.query("SELECT pg_advisory_lock(4242)");
    // the batch carries no bytes for the blob: were it deleted now, nothing could put it back
    const append = store.appendBatch(session.id, token!, 1, [entryLine(1, [shared.sha256])]);
    for (;;) {
      const waiting = await db.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
      if (waiting.rows[0].n > 0) break;
    }
    const report = await store.gc({ graceMs: 0 });
    await gate.query("SELECT pg_advisory_unlock(4242)");
    gate.release();
    expect(report.deleted).toEqual([]);
    expect(await append).toMatchObject({ lastSeq: 1 });
    expect(await store.blobs.has(shared.sha256)).toBe(true);
    expect((await store.gc({ graceMs: 0 })).deleted).toEqual([]);
  });

  it("loses no referenced blob when gc races 8 writers over shared old blobs (lost = 0)", async () => {
    const { store, url } = await freshStore();
    const pool = Array.from({ length: 6 }, (_, i) => blob(`shared ${i}`));
    for (const b of pool) await store.blobs.put(b.bytes);
    const writers = await Promise.all(
      Array.from({ length: 8 }, () => store.createSession(headerLine(), { lease: { holder: "w", ttlMs: 60_000 } })),
    );
    let stop = false;
    const gcRuns = (async () => {
      let runs = 0;
      while (!stop) {
        await age(
          url,
          pool.map((b) => b.sha256),
        );
        await store.gc({ graceMs: 0 });
        runs++;
      }
      return runs;
    })();
    const failures: unknown[] = [];
    await Promise.all(
      writers.map(async ({ session, token }, w) => {
        for (let seq = 1; seq <= 25; seq++) {
          const b = pool[(w + seq) % pool.length]!;
          // every other batch carries the bytes; the rest only reference a blob stored earlier
          const bytes = seq % 2 === 0 ? [b] : [];
          await store.appendBatch(session.id, token!, seq, [entryLine(seq, [b.sha256])], bytes).catch((err) => failures.push(err));
        }
      }),
    );
    stop = true;
    expect(await gcRuns).toBeGreaterThan(0);
    // a batch without bytes may find its blob collected before it started (BLOB_MISSING, nothing written); nothing else fails
    expect(failures.filter((e) => (e as { code?: string }).code !== "BLOB_MISSING")).toEqual([]);
    const dangling = await rawPool(url).query(
      `SELECT e.session_id, e.seq FROM entries e, regexp_matches(e.line, 'blob:sha256:([0-9a-f]{64})', 'g') AS m
        WHERE NOT EXISTS (SELECT 1 FROM blobs b WHERE b.sha256 = m[1])`,
    );
    expect(dangling.rows).toEqual([]);
  });
});
