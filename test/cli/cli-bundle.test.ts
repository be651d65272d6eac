import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.ts";
import { bytesOf, makeSession, treeOf } from "../bundle/helpers/bundle-fixtures.ts";
import { cli, cliProcess } from "../support/cli.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

const BIN = join(import.meta.dirname, "../../bin/transcript-store.mjs");

const contentOf = (root: string) => {
  const tree = treeOf(root);
  delete tree["blobs/.referrers.jsonl"];
  delete tree["blobs/.proven"]; // the blob store's proof cache, written at each put
  return tree;
};

/** `transcript-store <left> | transcript-store <right>` as two real processes joined by a pipe. */
function pipeline(left: string[], right: string[]): Promise<{ left: number | null; right: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env, TRANSCRIPT_STORE_URL: "" };
  const a = spawn(process.execPath, [BIN, ...left], { env, stdio: ["ignore", "pipe", "pipe"] });
  const b = spawn(process.execPath, [BIN, ...right], { env, stdio: ["pipe", "pipe", "pipe"] });
  a.stdout.pipe(b.stdin);
  let stdout = "";
  let stderr = "";
  a.stderr.on("data", (d) => (stderr += d));
  b.stderr.on("data", (d) => (stderr += d));
  b.stdout.on("data", (d) => (stdout += d));
  const exit = (p: ReturnType<typeof spawn>) => new Promise<number | null>((resolve) => p.on("close", resolve));
  return Promise.all([exit(a), exit(b)]).then(([l, r]) => ({ left: l, right: r, stdout, stderr }));
}

describe("transcript-store bundle | transcript-store unbundle -", () => {
  it("two real processes through a pipe restore the sessions byte for byte, --cwd-map applied; a second run is unchanged", async () => {
    const a = tempDir();
    const b = tempDir();
    const one = await makeSession("/src/one", { root: a }, 1);
    const two = await makeSession("/src/two", { root: a }, 2);
    const first = await pipeline(
      ["bundle", one.id, two.id, "--root", a],
      ["unbundle", "-", "--root", b, "--json", "--cwd-map", "/src=/dst"],
    );
    expect(first).toMatchObject({ left: 0, right: 0 });
    const records = first.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(records.map((r) => [r.type, r.id, r.status, r.cwd])).toEqual([
      ["unbundled", one.id, "created", "/dst/one"],
      ["unbundled", two.id, "created", "/dst/two"],
    ]);
    const restored = readFileSync(records[0].location, "utf8").split("\n");
    expect(restored.slice(1)).toEqual(readFileSync(one.path, "utf8").split("\n").slice(1));
    const before = treeOf(b);
    const second = await pipeline(["bundle", one.id, two.id, "--root", a], ["unbundle", "-", "--root", b, "--cwd-map", "/src=/dst"]);
    expect(second).toMatchObject({ left: 0, right: 0 });
    expect(second.stdout).toMatch(/^unchanged .*\nunchanged /);
    expect(treeOf(b)).toEqual(before);
  }, 60_000);

  it("bundle -o writes the archive (no temp file left); unbundle <file> restores it; --dry-run writes nothing", async () => {
    const a = tempDir();
    const b = tempDir();
    const { id } = await makeSession("/proj", { root: a });
    const out = join(tempDir(), "s.tar");
    const made = await cli(["bundle", id, "-o", out, "--root", a, "--json"]);
    expect(made.code).toBe(0);
    expect(made.records[0]).toMatchObject({ type: "bundled", sessions: [id], path: out });
    expect(Object.keys(treeOf(join(out, ".."))).sort()).toEqual(["s.tar"]);
    const dry = await cli(["unbundle", out, "--dry-run", "--root", b]);
    expect(dry).toMatchObject({ code: 0 });
    expect(dry.stdout).toMatch(new RegExp(`^would be created ${id} `));
    expect(treeOf(b)).toEqual({});
    expect((await cli(["unbundle", out, "--root", b])).code).toBe(0);
    expect(contentOf(b)).toEqual(contentOf(a));
  });

  it("bundle -o onto a file that exists is OUTPUT_EXISTS: the file untouched, no temp file left", async () => {
    const a = tempDir();
    const { id } = await makeSession("/proj", { root: a });
    const dir = tempDir();
    const out = join(dir, "s.tar");
    writeFileSync(out, "keep me");
    const run = await cli(["bundle", id, "-o", out, "--root", a, "--json"]);
    expect(run.code).toBe(1);
    expect(run.records.at(-1)).toMatchObject({ type: "error", code: "OUTPUT_EXISTS" });
    expect(readFileSync(out, "utf8")).toBe("keep me");
    expect(readdirSync(dir)).toEqual(["s.tar"]);
  });

  it("bundle refuses to write the archive to a terminal (exit 2, nothing on stdout)", async () => {
    const a = tempDir();
    const { id } = await makeSession("/proj", { root: a });
    const bytes = new PassThrough();
    let stderr = "";
    const code = await main(["bundle", id, "--root", a], {
      stdout: () => {},
      stderr: (t) => (stderr += t),
      stdoutBytes: bytes,
      stdoutIsTTY: true,
      stdin: Readable.from([]),
      isTTY: false,
      env: {},
      cwd: a,
    });
    bytes.end();
    expect(code).toBe(2);
    expect(stderr).toContain("stdout is a terminal");
    expect((await bytesOf(bytes)).length).toBe(0);
  });

  it("a damaged bundle: exit 1 with BUNDLE_CORRUPT (--json: the error record), the store untouched", async () => {
    const a = tempDir();
    const b = tempDir();
    const { id } = await makeSession("/proj", { root: a });
    await makeSession("/kept", { root: b }, 5);
    const file = join(tempDir(), "s.tar");
    expect((await cliProcess(["bundle", id, "-o", file, "--root", a])).code).toBe(0);
    const bytes = readFileSync(file);
    bytes[1600]! ^= 0x10; // in the first entry lines (the header member: one block of data, then the lines member's header)
    writeFileSync(file, bytes);
    const before = treeOf(b);
    const run = await cliProcess(["unbundle", file, "--root", b, "--json"]);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout.toString().trim().split("\n").pop()!)).toMatchObject({ type: "error", code: "BUNDLE_CORRUPT" });
    expect(treeOf(b)).toEqual(before);
    expect((await cli(["unbundle", file, "--root", b, "--cwd-map", "nonsense"])).code).toBe(2);
  }, 60_000);
});

describe.skipIf(!pgCluster())("bundle | unbundle - with PostgreSQL on either side (--store)", () => {
  it("file tree → database → file tree through real processes: the last tree equals the first, byte for byte", async () => {
    const a = tempDir();
    const c = tempDir();
    const { id } = await makeSession("/proj", { root: a });
    const url = await freshDatabase();
    const into = await pipeline(["bundle", id, "--root", a], ["unbundle", "-", "--store", url]);
    expect(into).toMatchObject({ left: 0, right: 0 });
    expect(into.stdout).toMatch(new RegExp(`^created ${id} .*#${id}\n$`));
    const out = await pipeline(["bundle", id, "--store", url], ["unbundle", "-", "--root", c]);
    expect(out).toMatchObject({ left: 0, right: 0 });
    expect(contentOf(c)).toEqual(contentOf(a));
  }, 60_000);
});
