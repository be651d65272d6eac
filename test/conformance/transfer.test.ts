import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager, type SessionManagerOptions } from "../../src/index.ts";
import { quarantinePathOf } from "../../src/session/paths.ts";
import { resolveSessionManagerOptions } from "../../src/session/session-options.ts";
import { backendOf } from "../../src/storage/backends.ts";
import { bytesSource, readAllBytes, type SessionSnapshot, snapshotOfEntries } from "../../src/storage/session-snapshot.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { type BackendUnderTest, describeBackends } from "./backends.ts";

const user = (text: string) => ({ role: "user", content: text, timestamp: 1 });
const picture = (png: Buffer) => ({
  role: "user",
  content: [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }],
  timestamp: 1,
});

/** A store as the seam sees it: its backend and resolved options. */
function seam(options: SessionManagerOptions) {
  const resolved = resolveSessionManagerOptions({ ...options, onWarning: () => {} });
  return { backend: backendOf(resolved), resolved };
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Everything a snapshot holds, read out (for byte comparisons). */
async function contents(snapshot: SessionSnapshot) {
  const hashes = (await collect(snapshot.blobHashes())).sort();
  const blobs = await Promise.all(
    hashes.map(async (h) => {
      const bytes = await snapshot.blob(h);
      return bytes === null ? null : (await readAllBytes(bytes)).toString("base64");
    }),
  );
  const artifacts = await Promise.all(
    (await collect(snapshot.artifacts())).map(async (a) => ({
      name: a.name,
      size: a.size,
      bytes: (await readAllBytes(a)).toString("base64"),
    })),
  );
  return { headerLine: snapshot.headerLine, lines: await collect(snapshot.lines()), hashes, blobs, artifacts };
}

/** What the store holds of session `id`, read back through its own export (file bytes / rows), or null. */
async function stored(options: SessionManagerOptions, id: string) {
  const { backend, resolved } = seam(options);
  const ref = await backend.locate(id, resolved);
  return ref === null ? null : contents(await backend.exportSnapshot(ref, resolved));
}

async function exportOf(options: SessionManagerOptions, id: string): Promise<SessionSnapshot> {
  const { backend, resolved } = seam(options);
  const ref = await backend.locate(id, resolved);
  expect(ref).not.toBeNull();
  return backend.exportSnapshot(ref!, resolved);
}

async function importInto(options: SessionManagerOptions, snapshot: SessionSnapshot) {
  const { backend, resolved } = seam(options);
  return backend.importSnapshot(snapshot, resolved);
}

/** A session with text, an image (a blob) and an artifact; returns its id. */
async function seed(options: SessionManagerOptions, texts: string[] = ["one", "two"]): Promise<string> {
  const m = await SessionManager.create("/work/t", options);
  for (const t of texts) m.appendMessage(user(t));
  m.appendMessage(picture(makePng(20, 20, 7)));
  m.artifacts!.save("artifact body", { toolType: "bash" });
  const id = m.sessionId;
  await m.close();
  return id;
}

async function append(options: SessionManagerOptions, id: string, text: string): Promise<void> {
  const { backend, resolved } = seam(options);
  const m = await SessionManager.open((await backend.locate(id, resolved))!, options);
  m.appendMessage(user(text));
  await m.close();
}

/** The checks every pair of stores passes, `from` a store holding the session, `to` one to import into. */
function transferBehaviours(from: () => Promise<SessionManagerOptions>, to: () => Promise<SessionManagerOptions>) {
  it("export → import round trip: header, lines byte for byte, blobs and artifacts; the session opens the same", async () => {
    const [a, b] = [await from(), await to()];
    const id = await seed(a);
    const source = await stored(a, id);
    expect(await seam(b).backend.has(id, seam(b).resolved)).toBe(false);
    const done = await importInto(b, await exportOf(a, id));
    expect(done).toMatchObject({ status: "created", id, relation: null, lines: 3 });
    expect(await stored(b, id)).toEqual(source);
    expect(source!.hashes).toHaveLength(1);
    expect(source!.artifacts.length).toBeGreaterThan(0);
    expect(await seam(b).backend.has(id, seam(b).resolved)).toBe(true);
    const [ma, mb] = [
      await SessionManager.open((await seam(a).backend.locate(id, seam(a).resolved))!, { ...a, readOnly: true }),
      await SessionManager.open(done.location.includes("#") ? id : done.location, { ...b, readOnly: true }),
    ];
    expect(mb.getEntries().map((e) => mb.rehydrate(e))).toEqual(ma.getEntries().map((e) => ma.rehydrate(e)));
    const listed = (m: SessionManager) =>
      m.artifacts!.list().map((r) => ({ id: r.id, toolType: r.toolType, text: m.artifacts!.getText(r.id) }));
    expect(listed(mb)).toEqual(listed(ma));
    expect(listed(ma)).toEqual([expect.objectContaining({ toolType: "bash", text: "artifact body" })]);
    await ma.close();
    await mb.close();
  });

  it("re-importing the same session is unchanged, nothing written", async () => {
    const [a, b] = [await from(), await to()];
    const id = await seed(a);
    await importInto(b, await exportOf(a, id));
    const before = await stored(b, id);
    expect(await importInto(b, await exportOf(a, id))).toMatchObject({ status: "unchanged", relation: "same" });
    expect(await stored(b, id)).toEqual(before);
  });

  it("a source that grew is appended (ahead); a store copy that grew stays as it is", async () => {
    const [a, b] = [await from(), await to()];
    const id = await seed(a);
    await importInto(b, await exportOf(a, id));
    await append(a, id, "three");
    expect(await importInto(b, await exportOf(a, id))).toMatchObject({ status: "appended", relation: "sourceAhead", lines: 4 });
    expect((await stored(b, id))!.lines).toEqual((await stored(a, id))!.lines);
    await append(b, id, "only in the store");
    const before = await stored(b, id);
    expect(await importInto(b, await exportOf(a, id))).toMatchObject({ status: "unchanged", relation: "storeAhead" });
    expect(await stored(b, id)).toEqual(before);
    expect(before!.lines).toHaveLength(5);
  });

  it("diverged copies are IMPORT_CONFLICT with nothing written", async () => {
    const [a, b] = [await from(), await to()];
    const id = await seed(a);
    await importInto(b, await exportOf(a, id));
    await append(a, id, "source side");
    await append(b, id, "store side");
    const before = await stored(b, id);
    await expect(importInto(b, await exportOf(a, id))).rejects.toMatchObject({ code: "IMPORT_CONFLICT" });
    expect(await stored(b, id)).toEqual(before);
    expect(before!.lines.at(-1)).toContain("store side");
  });
}

describeBackends("transfer through the storage seam", (backend: BackendUnderTest) => {
  transferBehaviours(
    () => backend.options(),
    () => backend.options(),
  );

  it("an import that would append to a session a writer holds is SESSION_LOCKED, nothing written", async () => {
    const [a, b] = [await backend.options(), await backend.options()];
    const id = await seed(a);
    await importInto(b, await exportOf(a, id));
    await append(a, id, "grown at the source");
    const writer = await SessionManager.open((await seam(b).backend.locate(id, seam(b).resolved))!, b);
    try {
      const before = await stored(b, id);
      await expect(importInto(b, await exportOf(a, id))).rejects.toMatchObject({ code: "SESSION_LOCKED" });
      expect(await stored(b, id)).toEqual(before);
    } finally {
      await writer.close();
    }
    expect(await importInto(b, await exportOf(a, id))).toMatchObject({ status: "appended" });
  });

  it("a snapshot referencing a blob its source lacks is BLOB_MISSING, nothing written", async () => {
    const options = await backend.options();
    const { backend: b, resolved } = seam(options);
    const hash = "ab".repeat(32);
    const header = {
      type: "session",
      version: 3,
      id: "0199cccc-0000-7000-8000-000000000001",
      timestamp: "2026-01-01T00:00:00.000Z",
      cwd: "/w",
    };
    const line = JSON.stringify({
      type: "message",
      id: "e1",
      parentId: null,
      timestamp: "t",
      message: { role: "user", content: [{ type: "image", data: `blob:sha256:${hash}`, mimeType: "image/png" }] },
    });
    const snapshot: SessionSnapshot = {
      header: header as SessionSnapshot["header"],
      headerLine: JSON.stringify(header),
      lines: async function* () {
        yield line;
      },
      quarantine: async function* () {},
      artifacts: async function* () {},
      blobHashes: async function* () {
        yield hash;
      },
      blob: async () => null,
    };
    await expect(b.importSnapshot(snapshot, resolved)).rejects.toMatchObject({ code: "BLOB_MISSING" });
    expect(await b.has(header.id, resolved)).toBe(false);
  });

  it("a session whose id is not file-safe is found by its id: a re-import is unchanged, not a second copy", async () => {
    const options = await backend.options();
    const { backend: b, resolved } = seam(options);
    const header = { type: "session", version: 3, id: "odd.id+with/chars", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" } as const;
    const entry = { type: "message", id: "e1", parentId: null, timestamp: "t", message: { role: "user", content: "hi" } };
    const snapshot = () => snapshotOfEntries(header, [entry], resolved.prepare);
    expect(await b.importSnapshot(snapshot(), resolved)).toMatchObject({ status: "created" });
    expect(await b.has(header.id, resolved)).toBe(true);
    expect(await b.importSnapshot(snapshot(), resolved)).toMatchObject({ status: "unchanged", relation: "same" });
    expect((await b.list(null, resolved)).map((s) => s.id)).toEqual([header.id]);
  });

  it("locate is the exact id: a prefix or an unknown id is null", async () => {
    const options = await backend.options();
    const id = await seed(options);
    const { backend: b, resolved } = seam(options);
    expect(await b.locate(id, resolved)).not.toBeNull();
    expect(await b.locate(id.slice(0, 8), resolved)).toBeNull();
    expect(await b.has("0000aaaa-0000-7000-8000-000000000000", resolved)).toBe(false);
    await expect(b.exportSnapshot(backend.missingRef, resolved)).rejects.toMatchObject({
      code: "SESSION_NOT_FOUND",
    });
  });
});

const databases: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of databases.splice(0)) await b.close();
});

const fileStore = async (): Promise<SessionManagerOptions> => ({ root: tempDir("ts-xfer-") });
const pgStore = async (): Promise<SessionManagerOptions> => {
  const store = PostgresBackend.of(await freshDatabase());
  databases.push(store);
  return { store, root: tempDir("ts-xfer-pg-") };
};

describe.skipIf(pgCluster() === null)("transfer across backends: file → postgres", () => transferBehaviours(fileStore, pgStore));
describe.skipIf(pgCluster() === null)("transfer across backends: postgres → file", () => transferBehaviours(pgStore, fileStore));

describe("an artifact name from a snapshot stays inside the session", () => {
  it.each(["../outside", "a/../../outside", "/abs", "a//b"])(
    "%s is INVALID_OPTION on the file tree, no session and nothing outside",
    async (name) => {
      const [a, b] = [await fileStore(), await fileStore()];
      const id = await seed(a);
      const snapshot = await exportOf(a, id);
      const bad: SessionSnapshot = {
        ...snapshot,
        artifacts: async function* () {
          yield { name, ...bytesSource(Buffer.from("x")) };
        },
      };
      await expect(importInto(b, bad)).rejects.toMatchObject({ code: "INVALID_OPTION" });
      expect(await seam(b).backend.has(id, seam(b).resolved)).toBe(false);
      const { readdirSync } = await import("node:fs");
      expect(readdirSync(b.root!).sort()).toEqual(["blobs", "sessions"]);
    },
  );
});

/** A file session whose torn last line went to quarantine on open: the source of the quarantine group. */
async function damaged(options: SessionManagerOptions): Promise<{ id: string; quarantine: Buffer }> {
  const id = await seed(options);
  const { backend, resolved } = seam(options);
  const path = (await backend.locate(id, resolved))!;
  const { appendFileSync } = await import("node:fs");
  appendFileSync(path, '{"type":"message","torn');
  const m = await SessionManager.open(path, options);
  await m.close();
  return { id, quarantine: readFileSync(quarantinePathOf(path)) };
}

/** The quarantine group: where a backend declares `quarantine` the records arrive byte for byte; elsewhere the import is refused. */
describeBackends("quarantine moves with a session (into it)", (backend) => {
  it.runIf(backend.supports.quarantine)("the quarantine records arrive byte for byte", async () => {
    const [a, b] = [await fileStore(), await backend.options()];
    const { id, quarantine } = await damaged(a);
    expect(quarantine.length).toBeGreaterThan(0);
    await importInto(b, await exportOf(a, id));
    const records = await collect((await exportOf(b, id)).quarantine());
    expect(`${records.join("\n")}\n`).toEqual(quarantine.toString("utf8"));
  });

  it.runIf(!backend.supports.quarantine)("refused (the store keeps no quarantine), nothing written", async () => {
    const [a, b] = [await fileStore(), await backend.options()];
    const { id } = await damaged(a);
    await expect(importInto(b, await exportOf(a, id))).rejects.toMatchObject({ code: "INVALID_OPTION" });
    expect(await seam(b).backend.has(id, seam(b).resolved)).toBe(false);
  });

  it.runIf(backend.supports.quarantine && backend.sessionFiles)(
    "a file store keeps it in the quarantine file beside the session",
    async () => {
      const [a, b] = [await fileStore(), await backend.options()];
      const { id, quarantine } = await damaged(a);
      const done = await importInto(b, await exportOf(a, id));
      expect(readFileSync(quarantinePathOf(done.location))).toEqual(quarantine);
    },
  );
});
