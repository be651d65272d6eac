import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/index.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { PostgresBackend } from "../../src/storage/postgres/pg-backend.ts";
import { cli } from "../support/cli.ts";
import { expectWholeOrAbsent, writeImportTree } from "../support/pg-import-tree.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";
import { imageOf } from "./helpers/pg-images.ts";
import { checkRows, startWriter, suiteDatabase } from "./helpers/pg-writers.ts";

const WRITERS = 8;
const ENTRIES = 60;

type Content = string | Array<{ type: string; text?: string; data?: string }>;

describe.skipIf(!pgCluster())("PostgreSQL: gc racing 8 writers", () => {
  const db = suiteDatabase();

  it("8 writers append images (some shared) while gc loops with zero grace: every acknowledged image rehydrates", async () => {
    const root = tempDir("ts-pg-gc-");
    for (let i = 0; i < 50; i++) await db.store.blobs.put(Buffer.from(`orphan ${i}`));
    // the three shared images are stored unreferenced too: gc may collect each just as the first writer references it
    for (const i of [1, 5, 9]) await db.store.blobs.put(imageOf("w0", i));
    const writers = Array.from({ length: WRITERS }, (_, w) =>
      startWriter({
        mode: "images",
        url: db.url,
        ref: "new",
        tag: `w${w}`,
        seed: 900 + w,
        root,
        control: join(root, "never"),
        count: ENTRIES,
      }),
    );
    let gcRuns = 0;
    let deleted = 0;
    let done = false;
    const all = Promise.all(writers.map((w) => w.exited)).finally(() => (done = true));
    while (!done) {
      const r = await SessionManager.gc({ store: db.backend, graceMs: 0 });
      gcRuns++;
      deleted += r.deleted.length;
    }
    for (const { code, stderr } of await all) expect(code, stderr).toBe(0);
    let entries = 0;
    let images = 0;
    for (const [w, writer] of writers.entries()) {
      expect(writer.lines.at(-1)).toBe("closed");
      const id = writer.lines[0]!.slice("session ".length);
      await checkRows(db.store, id, writer.acks);
      const warnings: StoreWarning[] = [];
      const m = await SessionManager.open(id, { store: db.backend, root, readOnly: true, onWarning: (x) => warnings.push(x) });
      expect(warnings).toEqual([]);
      for (const ack of writer.acks) {
        const content = (m.getEntry(ack)!.message as { content: Content }).content;
        entries++;
        if (typeof content === "string") continue;
        const i = Number(content[0]!.text!.split("/")[1]);
        expect(content[1]!.data, `image of ${content[0]!.text}`).toBe(imageOf(`w${w}`, i).toString("base64"));
        images++;
      }
      expect(writer.acks.length).toBeGreaterThanOrEqual(ENTRIES);
    }
    // every image is stored once, referenced, and still there
    const { rows } = await db.store.pool.query<{ missing: number }>(
      "SELECT count(*)::int AS missing FROM blob_refs r WHERE NOT EXISTS (SELECT 1 FROM blobs b WHERE b.sha256 = r.sha256)",
    );
    expect(rows[0]!.missing).toBe(0);
    expect(gcRuns).toBeGreaterThan(1);
    expect(deleted).toBeGreaterThanOrEqual(50);
    console.log(
      `pg gc race: ${WRITERS} writers, ${entries} acknowledged entries (${images} images, 3 shared by all), ` +
        `${gcRuns} gc runs (zero grace) deleting ${deleted} orphan(s), lost = 0`,
    );
  }, 300_000);

  it("migrate --to while gc loops with zero grace over the very blobs it needs (stored, unreferenced): no BLOB_MISSING", async () => {
    const root = tempDir("ts-pg-gc-import-");
    const sessions = await writeImportTree(root);
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    try {
      // an earlier import whose sessions were deleted since: its images are orphans the re-import finds stored
      expect((await cli(["migrate", "--root", root, "--to", url])).code).toBe(0);
      const store = await backend.connect();
      await store.pool.query("DELETE FROM sessions");
      // none is collectable yet (touched in the future); the loop below ages them one by one, in import order,
      // so gc takes each just as the import may have found it stored
      await store.pool.query("UPDATE blobs SET touched = now() + interval '1 day'");
      const { rows: order } = await store.pool.query<{ sha256: string }>("SELECT sha256 FROM blobs ORDER BY sha256");
      const blobs = order.length;
      let done = false;
      const importing = cli(["migrate", "--root", root, "--to", url, "--json"]).finally(() => (done = true));
      let gcRuns = 0;
      let deleted = 0;
      while (!done) {
        const next = order[gcRuns % blobs]!.sha256;
        await store.pool.query("UPDATE blobs SET touched = now() - interval '2 hours' WHERE sha256 = $1", [next]);
        deleted += (await SessionManager.gc({ store: backend, graceMs: 0 })).deleted.length;
        gcRuns++;
      }
      const result = await importing;
      expect(result.code, result.stdout).toBe(0);
      expect(result.records.filter((r) => r.type === "file").map((r) => r.status)).toEqual(["imported", "imported", "imported"]);
      expect(await expectWholeOrAbsent(url, sessions)).toBe(sessions.size);
      for (const id of sessions.keys()) {
        const warnings: StoreWarning[] = [];
        const m = await SessionManager.open(id, { store: backend, readOnly: true, onWarning: (w) => warnings.push(w) });
        expect(warnings).toEqual([]);
        await m.close();
      }
      expect(gcRuns).toBeGreaterThan(1);
      console.log(`pg gc vs migrate --to: ${blobs} stored orphans the import needs, ${gcRuns} gc runs deleting ${deleted}, lost = 0`);
    } finally {
      await backend.close();
    }
  }, 300_000);
});
