import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../../src/index.ts";
import type { SessionEntry, SessionHeader } from "../../../src/index.ts";
import { resolveSessionManagerOptions } from "../../../src/session/session-options.ts";
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

describe.skipIf(!pgCluster())("PostgresBackend.importSession: re-imports never replace what the database holds", () => {
  it("imports, then reports unchanged, updated (the source grew), continued (the database grew) and IMPORT_CONFLICT", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const options = resolveSessionManagerOptions({ store: backend });
    const none = () => null;
    expect((await backend.importSession(header, entries(3), options, none)).status).toBe("imported");
    expect((await backend.importSession(header, entries(3), options, none)).status).toBe("unchanged");
    expect((await backend.importSession(header, entries(5), options, none)).status).toBe("updated");
    expect((await backend.importSession(header, entries(4), options, none)).status).toBe("continued");
    const changed = [...entries(2), entry(3, "edited elsewhere")];
    await expect(backend.importSession(header, changed, options, none)).rejects.toMatchObject({ code: "IMPORT_CONFLICT" });
    const stored = await SessionManager.open(header.id, { store: backend, readOnly: true });
    expect(stored.getEntries()).toEqual(entries(5));
    await stored.close();
  });

  it("brings a source's header change across (cwd, title, parent); keeps a move made in the database; both is a conflict", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const store = await backend.connect();
    const options = resolveSessionManagerOptions({ store: backend });
    const none = () => null;
    expect((await backend.importSession(header, entries(3), options, none)).status).toBe("imported");
    // the source file moved (and was renamed, and re-parented) since: the re-run must not say unchanged
    const moved: SessionHeader = { ...header, cwd: "/moved", title: "renamed", parentSession: "0199bbbb-0000-7000-8000-00000000000f" };
    expect((await backend.importSession(moved, entries(3), options, none)).status).toBe("updated");
    let row = (await store.getSession(header.id))!;
    expect(row).toMatchObject({ cwd: "/moved", title: "renamed", parentSession: moved.parentSession, lastSeq: 3 });
    expect(row.header).toBe(JSON.stringify(moved));
    expect((await backend.importSession(moved, entries(3), options, none)).status).toBe("unchanged");
    // the database copy was moved since: the source's unchanged header does not undo that move
    const m = await SessionManager.open(header.id, { store: backend });
    await m.moveTo("/moved-in-db");
    await m.close();
    expect((await backend.importSession(moved, entries(3), options, none)).status).toBe("continued");
    expect((await store.getSession(header.id))!.cwd).toBe("/moved-in-db");
    // both moved: reported, nothing changed
    const again = { ...moved, cwd: "/moved-again" };
    await expect(backend.importSession(again, entries(4), options, none)).rejects.toMatchObject({ code: "IMPORT_CONFLICT" });
    row = (await store.getSession(header.id))!;
    expect(row).toMatchObject({ cwd: "/moved-in-db", lastSeq: 3 });
  });

  it("a session imported before schema step 3 (no imported_header): an unchanged source is unchanged, a moved one a conflict", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const store = await backend.connect();
    const options = resolveSessionManagerOptions({ store: backend });
    const none = () => null;
    const other = { ...header, id: "0199bbbb-0000-7000-8000-000000000002" };
    for (const h of [header, other]) expect((await backend.importSession(h, entries(2), options, none)).status).toBe("imported");
    await store.pool.query("UPDATE sessions SET imported_header = NULL");
    // the same header: nothing to bring; the base is recorded, so a later move of the source comes across
    expect((await backend.importSession(header, entries(2), options, none)).status).toBe("unchanged");
    expect((await backend.importSession({ ...header, cwd: "/later" }, entries(2), options, none)).status).toBe("updated");
    // no base and a header that differs: which side moved is unknown, so it is reported, not guessed
    await expect(backend.importSession({ ...other, cwd: "/later" }, entries(2), options, none)).rejects.toMatchObject({
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
    expect((await backend.importSession(header, source, options, bytesOf)).status).toBe("imported");
    expect(swept).toEqual([]);
    const m = await SessionManager.open(header.id, { store: backend, readOnly: true });
    const images = m.getEntries().map((e) => ((e.message as { content: unknown }).content as Array<{ data?: string }>)[0]?.data);
    expect(images.slice(1)).toEqual([old.toString("base64"), fresh.toString("base64")]);
    await m.close();
  });
});
