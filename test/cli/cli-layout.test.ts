import { readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { blobDirEntries } from "../support/blob-dir.ts";
import { cli } from "../support/cli.ts";
import { makePng } from "../support/png.ts";
import { piDirName, writePiSession } from "../support/pi-tree.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sha } from "../support/sha.ts";

const TIME = "2026-01-02T03:04:05.678Z";

/** A pi tree with one v2 session holding an inline image, and one v3 session in another cwd. */
function piTree() {
  const base = tempDir();
  const sessionsDir = join(base, "agent", "sessions");
  const blobsDir = join(base, "blobs");
  const cwd = join(base, "proj");
  const png = makePng(16, 16, 3).toString("base64");
  const old = writePiSession(sessionsDir, cwd, {
    id: "019a0000-0000-7000-8000-0000000000a1",
    time: TIME,
    version: 2,
    lines: [
      {
        type: "message",
        id: "11111111",
        parentId: null,
        timestamp: TIME,
        message: {
          role: "user",
          content: [
            { type: "text", text: "see" },
            { type: "image", data: png, mimeType: "image/png" },
          ],
        },
      },
      {
        type: "message",
        id: "22222222",
        parentId: "11111111",
        timestamp: TIME,
        message: { role: "assistant", content: [{ type: "text", text: "ok" }] },
      },
    ],
  });
  const other = writePiSession(sessionsDir, join(base, "elsewhere"), { id: "019a0000-0000-7000-8000-0000000000b2", time: TIME });
  const dirs = ["--sessions-dir", sessionsDir, "--blobs-dir", blobsDir];
  return { base, sessionsDir, blobsDir, cwd, png, old, other, dirs };
}

describe("CLI on a pi tree (--layout, detected)", () => {
  it("ls lists a cwd's pi sessions and --all every one, detected without --layout", async () => {
    const t = piTree();
    const local = await cli(["ls", t.cwd, ...t.dirs, "--json"]);
    expect(local.code).toBe(0);
    expect(local.records.map((r) => r.path)).toEqual([t.old]);
    const all = await cli(["ls", "--all", ...t.dirs, "--json"]);
    expect(all.records.map((r) => r.path).sort()).toEqual([t.old, t.other].sort());
    const forcedOmp = await cli(["ls", t.cwd, ...t.dirs, "--layout", "omp", "--json"]);
    expect(forcedOmp.records).toEqual([]);
  });

  it("migrate --in-place rewrites the files where pi keeps them; gc keeps the blob they now reference", async () => {
    const t = piTree();
    const migrated = await cli(["migrate", "--in-place", ...t.dirs, "--json"]);
    expect(migrated.code).toBe(0);
    const lines = readFileSync(t.old, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ type: "session", version: 3, cwd: t.cwd });
    const hash = sha(Buffer.from(t.png, "base64"));
    expect(lines[1].message.content[1].data).toBe(`blob:sha256:${hash}`);
    expect(lines.slice(1).map((l) => [l.id, l.parentId])).toEqual([
      ["11111111", null],
      ["22222222", "11111111"],
    ]);
    expect(readdirSync(t.sessionsDir).sort()).toEqual([piDirName(t.cwd), piDirName(join(t.base, "elsewhere"))].sort());
    expect(readdirSync(join(t.sessionsDir, piDirName(t.cwd)))).toEqual([t.old.split("/").at(-1)]);

    const orphan = sha("orphan");
    writeFileSync(join(t.blobsDir, orphan), "orphan");
    const old = new Date(Date.now() - 48 * 3600_000);
    for (const name of blobDirEntries(t.blobsDir)) utimesSync(join(t.blobsDir, name), old, old);
    const gc = await cli(["gc", ...t.dirs, "--json"]);
    expect(gc.code).toBe(0);
    expect(gc.records.filter((r) => r.type === "deleted").map((r) => r.hash)).toEqual([orphan]);
    expect(blobDirEntries(t.blobsDir)).toEqual([hash]);
  });

  it("migrate (importing) and import put sessions into a pi tree under pi's names", async () => {
    const t = piTree();
    const outside = join(t.base, "loose");
    const loose = writePiSession(outside, join(t.base, "third"), { id: "019a0000-0000-7000-8000-0000000000c3", time: TIME });
    const migrated = await cli(["migrate", loose, ...t.dirs, "--json"]);
    expect(migrated.code).toBe(0);
    expect(readdirSync(join(t.sessionsDir, piDirName(join(t.base, "third"))))).toEqual([loose.split("/").at(-1)]);
    const exported = await cli(["export", "019a0000-0000-7000-8000-0000000000b2", ...t.dirs]);
    const other = join(t.base, "other-tree");
    const imported = await cli(["import", "--sessions-dir", other, "--blobs-dir", t.blobsDir, "--layout", "pi", "--json"], {
      stdin: exported.stdout,
    });
    expect(imported.code).toBe(0);
    expect(readdirSync(other)).toEqual([piDirName(join(t.base, "elsewhere"))]);
  });

  it("mv moves a session into the pi bucket of the new cwd; a bad --layout is a usage error", async () => {
    const t = piTree();
    const to = join(t.base, "moved");
    const mv = await cli(["mv", "019a0000-0000-7000-8000-0000000000a1", to, ...t.dirs]);
    expect(mv.code).toBe(0);
    expect(readdirSync(join(t.sessionsDir, piDirName(to)))).toEqual([t.old.split("/").at(-1)]);
    expect(readdirSync(t.sessionsDir).every((name) => name.startsWith("--") && name.endsWith("--"))).toBe(true);
    const bad = await cli(["ls", ...t.dirs, "--layout", "pie"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--layout");
  });
});
