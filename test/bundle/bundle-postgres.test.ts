import { createHash } from "node:crypto";
import { appendFileSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { bundle, PostgresBackend, SessionManager, unbundle } from "../../src/index.ts";
import { resolveSessionManagerOptions } from "../../src/session/session-options.ts";
import { readAllBytes } from "../../src/storage/session-snapshot.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";
import { bytesOf, makeSession, treeOf } from "./helpers/bundle-fixtures.ts";

const backends: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
});

async function database(): Promise<PostgresBackend> {
  const backend = PostgresBackend.of(await freshDatabase());
  backends.push(backend);
  return backend;
}

const contentOf = (root: string) => {
  const tree = treeOf(root);
  delete tree["blobs/.referrers.jsonl"];
  delete tree["blobs/.proven"]; // the blob store's proof cache, written at each put
  return tree;
};

/** The session's header and entry lines as the database holds them (through the seam). */
async function storedLines(backend: PostgresBackend, id: string): Promise<string[]> {
  const snapshot = await backend.exportSnapshot(id, resolveSessionManagerOptions({ store: backend }));
  const lines = [snapshot.headerLine];
  for await (const line of snapshot.lines()) lines.push(line);
  return lines;
}

describe.skipIf(!pgCluster())("bundles between the file tree and PostgreSQL", () => {
  it("file → PostgreSQL → file: the lines rows hold the file's lines; the file tree comes back byte for byte", async () => {
    const a = tempDir();
    const c = tempDir();
    const { id, path } = await makeSession("/proj", { root: a });
    const backend = await database();
    const into = await unbundle([await bytesOf(bundle([id], { root: a }))], { store: backend });
    expect(into.sessions[0]).toMatchObject({ id, status: "created", location: expect.stringContaining(`#${id}`) });
    expect(await storedLines(backend, id)).toEqual(readFileSync(path, "utf8").split("\n").slice(0, -1));
    const blobs = resolveSessionManagerOptions({ store: backend });
    for (const p of Object.keys(contentOf(a)).filter((k) => k.startsWith("blobs/"))) {
      const bytes = await backend.exportSnapshot(id, blobs).then((s) => s.blob(p.slice("blobs/".length)));
      expect(
        createHash("sha256")
          .update(await readAllBytes(bytes!))
          .digest("hex"),
      ).toBe(p.slice("blobs/".length));
    }
    // idempotent in the database too
    expect((await unbundle([await bytesOf(bundle([id], { root: a }))], { store: backend })).sessions[0]!.status).toBe("unchanged");
    const back = await unbundle([await bytesOf(bundle([id], { store: backend }))], { root: c });
    expect(back.sessions[0]!.status).toBe("created");
    expect(contentOf(c)).toEqual(contentOf(a));
  });

  it("PostgreSQL → file: a database session (blobs, artifacts) restores into files, lines byte for byte, images rehydrating", async () => {
    const backend = await database();
    const { id, images } = await makeSession("/db/proj", { store: backend });
    const root = tempDir();
    const bytes = await bytesOf(bundle([id], { store: backend }));
    const report = await unbundle([bytes], { root, cwdMap: ["/db=/home/me"] });
    const s = report.sessions[0]!;
    expect(s).toMatchObject({ status: "created", cwd: "/home/me/proj" });
    const [header, ...lines] = readFileSync(s.location!, "utf8").split("\n").slice(0, -1);
    const [dbHeader, ...dbLines] = await storedLines(backend, id);
    expect(lines).toEqual(dbLines);
    expect(JSON.parse(header!)).toEqual({ ...JSON.parse(dbHeader!), cwd: "/home/me/proj" });
    const m = await SessionManager.open(s.location!, { root, readOnly: true });
    const message = m.getEntries()[1] as unknown as { message: { content: Array<{ data?: string }> } };
    expect(message.message.content[2]!.data).toBe(images[1]!.toString("base64"));
    await m.close();
    const artifacts = Object.keys(treeOf(root)).filter((p) => p.includes(`${id}/`));
    expect(artifacts.length).toBe(s.artifacts);
    expect(s.artifacts).toBeGreaterThan(0);
    // a damaged bundle changes no row
    const broken = Buffer.from(bytes);
    broken[Math.floor(broken.length / 2)]! ^= 1;
    const other = await database();
    await expect(unbundle([broken], { store: other })).rejects.toMatchObject({ code: "BUNDLE_CORRUPT" });
    const store = await other.connect();
    expect(await store.getSession(id)).toBeNull();
  });
});

describe.skipIf(!pgCluster())("unbundle into PostgreSQL: a session with quarantine records", () => {
  it("is refused (INVALID_OPTION); the message names the sessions restored before it, unchanged on a re-run", async () => {
    const a = tempDir();
    const clean = await makeSession("/proj/clean", { root: a }, 1);
    const torn = await makeSession("/proj/torn", { root: a }, 2);
    appendFileSync(torn.path, '{"type":"message","id":"deadbeef","torn');
    const m = await SessionManager.open(torn.path, { root: a });
    m.appendMessage({ role: "user", content: "after" });
    await m.close();
    const bytes = await bytesOf(bundle([clean.id, torn.id], { root: a }));
    const backend = await database();
    const err = (await unbundle([bytes], { store: backend }).catch((e: unknown) => e)) as Error & { code: string };
    expect(err).toMatchObject({ code: "INVALID_OPTION" });
    expect(err.message).toContain(`restored before it: ${clean.id} (created)`);
    const store = await backend.connect();
    expect(await store.getSession(torn.id)).toBeNull();
    expect((await unbundle([await bytesOf(bundle([clean.id], { root: a }))], { store: backend })).sessions[0]!.status).toBe("unchanged");
  });
});
