import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/index.ts";
import { cli } from "../support/cli.ts";
import { makePng } from "../support/png.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

/** Every file under `dir` (relative path → bytes), sorted: a store's tree, compared byte for byte. */
function tree(dir: string, base = dir): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) Object.assign(out, tree(path, base));
    else if (!entry.name.startsWith(".")) out[relative(base, path)] = readFileSync(path).toString("base64");
  }
  return out;
}

/** A file store with one session holding text and an image; returns its root and the session id. */
async function fileStore(): Promise<{ root: string; id: string }> {
  const root = tempDir("ts-mto-");
  const m = await SessionManager.create("/proj/x", { root });
  m.appendMessage({ role: "user", content: "hello", timestamp: 1 });
  m.appendMessage({
    role: "user",
    content: [{ type: "image", data: makePng(16, 16, 9).toString("base64"), mimeType: "image/png" }],
    timestamp: 1,
  });
  await m.close();
  return { root, id: m.sessionId };
}

describe("migrate --to <root dir>: a file tree into another, through the seam", () => {
  it("copies sessions and blobs byte for byte; a re-run is unchanged; a session continued at the target is continued", async () => {
    const { root, id } = await fileStore();
    const target = tempDir("ts-mto-target-");
    const first = await cli(["migrate", "--root", root, "--to", target, "--json"]);
    expect(first.code).toBe(0);
    expect(first.records[0]).toMatchObject({ type: "file", status: "imported", id, entries: 2 });
    expect(tree(join(target, "sessions"))).toEqual(tree(join(root, "sessions")));
    expect(tree(join(target, "blobs"))).toEqual(tree(join(root, "blobs")));
    const again = await cli(["migrate", "--root", root, "--to", target, "--json"]);
    expect(again.records[0]).toMatchObject({ status: "unchanged", id });
    const m = await SessionManager.open(first.records[0]!.location as string, { root: target });
    m.appendMessage({ role: "user", content: "at the target", timestamp: 2 });
    await m.close();
    const third = await cli(["migrate", "--root", root, "--to", target, "--json"]);
    expect(third.records[0]).toMatchObject({ status: "continued", id });
  });
});

describe("migrate --to names its target", () => {
  it("a URL of no registered backend is a usage error (exit 2), not a directory of that name", async () => {
    const { root } = await fileStore();
    const res = await cli(["migrate", "--root", root, "--to", "mysql://u@h/db"], { cwd: root });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("--to must be a postgres:// or postgresql:// URL or a store root directory");
    expect(readdirSync(root).sort()).toEqual(["blobs", "sessions"]);
  });
});

describe.skipIf(!pgCluster())("migrate --to between a file tree and databases, both ways", () => {
  it("file → postgres → file gives back the same files; postgres → postgres the same rows", async () => {
    const { root, id } = await fileStore();
    const [one, two] = [await freshDatabase(), await freshDatabase()];
    expect((await cli(["migrate", "--root", root, "--to", one, "--json"])).records[0]).toMatchObject({ status: "imported", id });
    const back = tempDir("ts-mto-back-");
    const out = await cli(["migrate", "--root", tempDir(), "--store", one, "--to", back, "--json"]);
    expect(out.code).toBe(0);
    expect(out.records[0]).toMatchObject({ status: "imported", id, source: id });
    expect(tree(join(back, "sessions"))).toEqual(tree(join(root, "sessions")));
    expect(tree(join(back, "blobs"))).toEqual(tree(join(root, "blobs")));
    const copy = await cli(["migrate", "--root", tempDir(), "--store", one, "--to", two, "--json"]);
    expect(copy.records[0]).toMatchObject({ status: "imported", id });
    const exported = async (url: string) => (await cli(["export", id, "--refs", "--store", url, "--root", tempDir()])).stdout;
    expect(await exported(two)).toEqual(await exported(one));
    expect((await cli(["migrate", "--root", tempDir(), "--store", one, "--to", two, "--json"])).records[0]).toMatchObject({
      status: "unchanged",
    });
  });
});
