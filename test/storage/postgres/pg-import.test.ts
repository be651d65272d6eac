import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../../src/index.ts";
import type { SessionEntry, SessionHeader } from "../../../src/index.ts";
import { type ResolvedSessionManagerOptions, resolveSessionManagerOptions } from "../../../src/session/session-options.ts";
import { snapshotOfEntries } from "../../../src/storage/session-snapshot.ts";
import { REPO_ROOT } from "../../support/child.ts";
import { makePng } from "../../support/png.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";
import { sha } from "../../support/sha.ts";

const backends: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
});

const header: SessionHeader = {
  type: "session",
  version: 3,
  id: "0199bbbb-0000-7000-8000-000000000001",
  timestamp: "2026-01-01T00:00:00.000Z",
  cwd: "/imp",
};
const entry = (n: number, text = `message ${n}`): SessionEntry => ({
  type: "message",
  id: `e${n}`,
  parentId: n === 1 ? null : `e${n - 1}`,
  timestamp: "2026-01-01T00:00:01.000Z",
  message: { role: "user", content: text },
});
const entries = (n: number) => Array.from({ length: n }, (_, i) => entry(i + 1));

/** An import through the seam (`importSnapshot`) of a session given as entries. */
function importer(backend: PostgresBackend, options: ResolvedSessionManagerOptions) {
  return (h: SessionHeader, e: SessionEntry[], bytesOf: (hash: string) => Buffer | null = () => null) =>
    backend.importSnapshot(snapshotOfEntries(h, e, options.prepare, { bytesOf }), options);
}

describe.skipIf(!pgCluster())("PostgresBackend.importSnapshot: re-imports never replace what the database holds", () => {
  it("creates, then reports unchanged (same), appended (the source grew), unchanged (the database grew) and IMPORT_CONFLICT", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const options = resolveSessionManagerOptions({ store: backend });
    const imp = importer(backend, options);
    expect(await imp(header, entries(3))).toMatchObject({ status: "created", relation: null });
    expect(await imp(header, entries(3))).toMatchObject({ status: "unchanged", relation: "same", header: "same" });
    expect(await imp(header, entries(5))).toMatchObject({ status: "appended", relation: "sourceAhead" });
    expect(await imp(header, entries(4))).toMatchObject({ status: "unchanged", relation: "storeAhead", header: "same" });
    const changed = [...entries(2), entry(3, "edited elsewhere")];
    await expect(imp(header, changed)).rejects.toMatchObject({ code: "IMPORT_CONFLICT" });
    const stored = await SessionManager.open(header.id, { store: backend, readOnly: true });
    expect(stored.getEntries()).toEqual(entries(5));
    await stored.close();
  });

  it("brings a source's header change across (cwd, title, parent); keeps a move made in the database; both is a conflict", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const store = await backend.connect();
    const options = resolveSessionManagerOptions({ store: backend });
    const imp = importer(backend, options);
    expect(await imp(header, entries(3))).toMatchObject({ status: "created", relation: null });
    // the source file moved (and was renamed, and re-parented) since: the re-run must not say unchanged
    const moved: SessionHeader = { ...header, cwd: "/moved", title: "renamed", parentSession: "0199bbbb-0000-7000-8000-00000000000f" };
    expect(await imp(moved, entries(3))).toMatchObject({ status: "unchanged", relation: "storeAhead", header: "updated" });
    let row = (await store.getSession(header.id))!;
    expect(row).toMatchObject({ cwd: "/moved", title: "renamed", parentSession: moved.parentSession, lastSeq: 3 });
    expect(row.header).toBe(JSON.stringify(moved));
    expect(await imp(moved, entries(3))).toMatchObject({ status: "unchanged", relation: "same", header: "same" });
    // the database copy was moved since: the source's unchanged header does not undo that move
    const m = await SessionManager.open(header.id, { store: backend });
    await m.moveTo("/moved-in-db");
    await m.close();
    expect(await imp(moved, entries(3))).toMatchObject({ status: "unchanged", relation: "storeAhead", header: "kept" });
    expect((await store.getSession(header.id))!.cwd).toBe("/moved-in-db");
    // both moved: reported, nothing changed
    const again = { ...moved, cwd: "/moved-again" };
    await expect(imp(again, entries(4))).rejects.toMatchObject({ code: "IMPORT_CONFLICT" });
    row = (await store.getSession(header.id))!;
    expect(row).toMatchObject({ cwd: "/moved-in-db", lastSeq: 3 });
  });

  it("a session imported before schema step 3 (no imported_header): an unchanged source is unchanged, a moved one a conflict", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const store = await backend.connect();
    const options = resolveSessionManagerOptions({ store: backend });
    const imp = importer(backend, options);
    const other = { ...header, id: "0199bbbb-0000-7000-8000-000000000002" };
    for (const h of [header, other]) expect((await imp(h, entries(2))).status).toBe("created");
    await store.pool.query("UPDATE sessions SET imported_header = NULL");
    // the same header: nothing to bring; the base is recorded, so a later move of the source comes across
    expect(await imp(header, entries(2))).toMatchObject({ status: "unchanged", header: "same" });
    expect(await imp({ ...header, cwd: "/later" }, entries(2))).toMatchObject({ status: "unchanged", header: "updated" });
    // no base and a header that differs: which side moved is unknown, so it is reported, not guessed
    await expect(imp({ ...other, cwd: "/later" }, entries(2))).rejects.toMatchObject({
      code: "IMPORT_CONFLICT",
    });
    expect((await store.getSession(other.id))!.cwd).toBe("/imp");
  });

  it("a gc sweeping while an import runs never takes a blob the import relies on (no BLOB_MISSING)", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    backends.push(backend);
    const store = await backend.connect();
    const options = resolveSessionManagerOptions({ store: backend, rehydrate: "lazy" });
    const imp = importer(backend, options);
    // an image the database holds already, unreferenced and past any grace (a deleted session's, say)
    const old = makePng(16, 16, 7);
    const oldHash = await store.blobs.put(old);
    await store.pool.query("UPDATE blobs SET touched = now() - interval '2 hours'");
    const fresh = makePng(16, 16, 8);
    const freshHash = sha(fresh);
    const withImage = (n: number, hash: string): SessionEntry => ({
      ...entry(n),
      message: { role: "user", content: [{ type: "image", data: `blob:sha256:${hash}`, mimeType: "image/png" }] },
    });
    const source = [entry(1), withImage(2, oldHash), withImage(3, freshHash)];
    let swept: string[] | null = null;
    const bytesOf = (hash: string) => {
      if (hash === oldHash) return old;
      if (hash !== freshHash) return null;
      // the import reads its next blob from the source while a gc (another process) sweeps the database
      const gc = spawnSync(process.execPath, ["--import", "tsx", join(import.meta.dirname, "helpers/pg-gc-child.ts"), url], {
        cwd: REPO_ROOT,
        encoding: "utf8",
      });
      expect(gc.status, gc.stderr).toBe(0);
      swept = JSON.parse(gc.stdout);
      return fresh;
    };
    expect((await imp(header, source, bytesOf)).status).toBe("created");
    expect(swept).toEqual([]);
    const m = await SessionManager.open(header.id, { store: backend, readOnly: true });
    const images = m.getEntries().map((e) => ((e.message as { content: unknown }).content as Array<{ data?: string }>)[0]?.data);
    expect(images.slice(1)).toEqual([old.toString("base64"), fresh.toString("base64")]);
    await m.close();
  });
});
