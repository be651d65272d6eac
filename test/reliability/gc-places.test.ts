import { existsSync, mkdirSync, readFileSync, renameSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readReferrers } from "../../src/blob/blob-referrers.ts";
import { collectGarbage } from "../../src/maintenance/gc.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { blobDirEntries } from "../support/blob-dir.ts";
import { runTs } from "../support/child.ts";
import { cli } from "../support/cli.ts";
import { injectFault } from "../support/fault.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sha } from "../support/sha.ts";

const HOUR = 3600_000;

function ageAll(dir: string, ms: number): void {
  const t = new Date(Date.now() - ms);
  for (const name of blobDirEntries(dir)) utimesSync(join(dir, name), t, t);
}

function imageMessage(seed: number) {
  return { role: "user", content: [{ type: "image", data: makePng(24, 24, seed).toString("base64"), mimeType: "image/png" }] };
}

describe("gc marks every place that references the blob store", () => {
  it("keeps the blobs of a session opened by explicit path outside the sessions dir", async () => {
    const root = tempDir();
    const repo = tempDir("ts-repo-");
    const m = await SessionManager.open(join(repo, ".agent", "chat.jsonl"), { root });
    m.appendMessage(imageMessage(1));
    await m.close();
    const blobsDir = join(root, "blobs");
    expect(readReferrers(blobsDir)).toEqual([{ kind: "dir", path: join(repo, ".agent") }]);
    ageAll(blobsDir, 2 * HOUR);
    mkdirSync(join(root, "sessions"), { recursive: true });
    const run = await cli(["gc", "--root", root, "--json"]);
    expect(run.code).toBe(0);
    expect(run.records.filter((r) => r.type === "deleted")).toEqual([]);
    const reopened = await SessionManager.open(join(repo, ".agent", "chat.jsonl"), { root, readOnly: true });
    expect(JSON.stringify(reopened.getEntries())).toContain(makePng(24, 24, 1).toString("base64"));
    await reopened.close();
  });

  it("registers, on its first writable open, a session written before the registry existed", async () => {
    const root = tempDir();
    const repo = tempDir("ts-repo-");
    const m = await SessionManager.open(join(repo, "chat.jsonl"), { root });
    m.appendMessage(imageMessage(5));
    await m.close();
    const blobsDir = join(root, "blobs");
    writeFileSync(join(blobsDir, ".referrers.jsonl"), ""); // as an older version left it: nothing registered
    (await SessionManager.open(join(repo, "chat.jsonl"), { root, readOnly: true })).close();
    expect(readReferrers(blobsDir)).toEqual([]); // read-only opens write nothing
    await (await SessionManager.open(join(repo, "chat.jsonl"), { root })).close();
    expect(readReferrers(blobsDir)).toEqual([{ kind: "dir", path: repo }]);
  });

  it("keeps the blobs of a pi tree migrated --in-place", async () => {
    const root = tempDir();
    const pi = tempDir("ts-pi-");
    const bucket = join(pi, "--home-me-proj--");
    mkdirSync(bucket);
    const png = makePng(30, 30, 7).toString("base64");
    const lines = [
      {
        type: "session",
        version: 3,
        id: "0190a5d2-0000-7000-8000-0000000000aa",
        timestamp: "2026-01-01T00:00:00.000Z",
        cwd: "/home/me/proj",
      },
      {
        type: "message",
        id: "m1",
        parentId: null,
        timestamp: "t",
        message: { role: "user", content: [{ type: "image", data: png, mimeType: "image/png" }] },
      },
    ];
    const file = join(bucket, "2026-01-01T00-00-00-000Z_0190a5d2-0000-7000-8000-0000000000aa.jsonl");
    writeFileSync(file, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    const migrated = await cli(["migrate", pi, "--in-place", "--root", root]);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(readFileSync(file, "utf8")).toContain("blob:sha256:");
    ageAll(join(root, "blobs"), 2 * HOUR);
    const run = await cli(["gc", "--root", root, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.records.filter((r) => r.type === "deleted")).toEqual([]);
    expect(blobDirEntries(join(root, "blobs"))).toEqual([sha(Buffer.from(png, "base64"))]);
  });

  it("refuses, deleting nothing, when its sessions root does not exist (a typo) and blobs do", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "proj"), { root });
    m.appendMessage(imageMessage(2));
    await m.close();
    ageAll(join(root, "blobs"), 2 * HOUR);
    const before = blobDirEntries(join(root, "blobs")).sort();
    const run = await cli(["gc", "--root", root, "--sessions-dir", join(root, "sesions")]);
    expect(run.code).toBe(2); // a typed directory that does not exist is a usage error: nothing scanned
    expect(run.stderr).toContain(join(root, "sesions"));
    expect(blobDirEntries(join(root, "blobs")).sort()).toEqual(before);
    // A store written before the registry (no registry file) with a typo'd root: gc refuses too.
    const legacy = tempDir();
    mkdirSync(join(legacy, "blobs"));
    writeFileSync(join(legacy, "blobs", sha("old")), "old");
    ageAll(join(legacy, "blobs"), 2 * HOUR);
    const refused = await cli(["gc", "--root", legacy, "--sessions-dir", join(legacy, "sesions")]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(join(legacy, "sesions"));
    expect(existsSync(join(legacy, "blobs", sha("old")))).toBe(true);
  });

  it("refuses while a registered place is missing, until it is explicitly forgotten", async () => {
    const root = tempDir();
    const repo = tempDir("ts-repo-");
    const m = await SessionManager.open(join(repo, "chat.jsonl"), { root });
    m.appendMessage(imageMessage(3));
    await m.close();
    const orphan = sha("orphan");
    writeFileSync(join(root, "blobs", orphan), "orphan");
    ageAll(join(root, "blobs"), 2 * HOUR);
    renameSync(repo, `${repo}-moved-away`); // the repository is unmounted, renamed, on another disk…
    const refused = await cli(["gc", "--root", root, "--grace", "0"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/REFERRER_MISSING/);
    expect(refused.stderr).toContain(repo);
    expect(blobDirEntries(join(root, "blobs"))).toHaveLength(2);
    const forgot = await cli(["gc", "--root", root, "--grace", "0", "--forget", repo, "--json"]);
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(forgot.records.find((r) => r.type === "forgot")).toMatchObject({ path: repo });
    // Forgotten: its blob is unreferenced now, like the orphan.
    expect(forgot.records.filter((r) => r.type === "deleted")).toHaveLength(2);
    expect(readReferrers(join(root, "blobs"))).toEqual([]);
  });

  it("refuses when a registered place cannot be read (EACCES through the I/O seam)", async () => {
    const root = tempDir();
    const repo = tempDir("ts-repo-");
    const m = await SessionManager.open(join(repo, "chat.jsonl"), { root });
    m.appendMessage(imageMessage(4));
    await m.close();
    ageAll(join(root, "blobs"), 2 * HOUR);
    const restore = injectFault("statSync", (_call, args) => (args[0] === repo ? "EACCES" : undefined));
    try {
      await expect(
        collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir: join(root, "blobs"), graceMs: 0 }),
      ).rejects.toMatchObject({ code: "REFERRER_MISSING" });
    } finally {
      restore();
    }
    expect(blobDirEntries(join(root, "blobs"))).toHaveLength(1);
  });

  it("two concurrent gc processes never both report, nor misreport, a deletion", async () => {
    const root = tempDir();
    const blobsDir = join(root, "blobs");
    mkdirSync(join(root, "sessions"), { recursive: true });
    mkdirSync(blobsDir);
    const orphans = Array.from({ length: 300 }, (_, i) => `orphan ${i}`);
    for (const body of orphans) writeFileSync(join(blobsDir, sha(body)), body);
    ageAll(blobsDir, 2 * HOUR);
    const child = join(import.meta.dirname, "helpers/gc-child.ts");
    const runs = await Promise.all([1, 2].map(() => runTs(child, [root])));
    const reported = runs.flatMap((r) => {
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as string[];
    });
    expect(reported.sort()).toEqual(orphans.map((b) => sha(b)).sort());
    expect(blobDirEntries(blobsDir).filter((n) => !n.startsWith("."))).toEqual([]);
  }, 60_000);
});
