import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BlobStore } from "../../src/blob/blob-store.ts";
import { collectGarbage } from "../../src/maintenance/gc.ts";
import { verifySessionFile } from "../../src/maintenance/verify.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { onLines, REPO_ROOT, runTs } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const WRITER = join(import.meta.dirname, "helpers/shared-blob-writer.ts");
const RACER = join(import.meta.dirname, "helpers/racer.ts");

/**
 * Two racers started at once on the same session: the one that takes the lock says "holding" and
 * waits; the other fails and exits; only then is the holder told to go on. Resolves with each
 * racer's output lines. No timing: whatever the machine's load, the lock alone decides.
 */
async function race(op: "move" | "fork-writer", path: string, root: string): Promise<string[][]> {
  const racers = ["a", "b"].map((tag) => {
    const child = spawn(process.execPath, ["--import", "tsx", RACER, op, path, root, tag], {
      cwd: REPO_ROOT,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const lines: string[] = [];
    let firstLine: (line: string) => void = () => {};
    const first = new Promise<string>((resolve) => (firstLine = resolve));
    onLines(child, (line) => {
      if (lines.length === 0) firstLine(line);
      lines.push(line);
    });
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const closed = new Promise<void>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", () => {
        firstLine(`(exited without output: ${stderr})`);
        resolve();
      });
    });
    return { child, lines, first, closed };
  });
  const firsts = await Promise.all(racers.map((r) => r.first));
  const holder = racers.find((_, i) => firsts[i] === "holding");
  const loser = racers.find((_, i) => firsts[i] !== "holding");
  if (loser !== undefined) await loser.closed;
  for (const r of racers) r.child.stdin!.end("go\n");
  if (holder !== undefined) await holder.closed;
  await Promise.all(racers.map((r) => r.closed));
  return racers.map((r) => r.lines);
}

describe("concurrency across processes", () => {
  it("8 writers sharing one blob store and the same images while gc loops with zero grace: no referenced blob is lost", async () => {
    const root = tempDir();
    const orphans = new BlobStore(join(root, "blobs"));
    for (let i = 0; i < 50; i++) orphans.putSync(Buffer.from(`orphan ${i}`));
    mkdirSync(join(root, "sessions")); // gc refuses a missing sessions root while blobs exist
    const writers = Array.from({ length: 8 }, (_, i) => runTs(WRITER, [root, String(i), "60"]));
    let gcRuns = 0;
    let deleted = 0;
    let done = false;
    const all = Promise.all(writers).finally(() => (done = true));
    while (!done) {
      const r = await collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir: join(root, "blobs"), graceMs: 0 });
      gcRuns++;
      deleted += r.deleted.length;
    }
    const results = await all;
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const paths = results.map((r) => r.stdout.trim().split("\n").at(-1)!);
    for (const path of paths) {
      expect(existsSync(path)).toBe(true);
      const v = verifySessionFile(path, { blobsDir: join(root, "blobs") });
      expect(v.findings).toEqual([]);
      expect(v.entries).toBe(60);
      expect(readFileSync(path, "utf8")).toContain("blob:sha256:");
    }
    expect(gcRuns).toBeGreaterThan(1);
    expect(deleted).toBeGreaterThanOrEqual(50);
    console.log(`concurrency: 8 writers × 60 entries, ${gcRuns} gc runs (zero grace) deleting ${deleted} orphan(s), lost = 0`);
  }, 180_000);

  it("two processes racing to move the same session: one wins, the other gets SESSION_LOCKED", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "start"), { root });
    m.appendMessage({ role: "user", content: "race me" });
    await m.close();
    const outs = await race("move", m.sessionFile!, root);
    expect(outs.map((lines) => lines.join(" ")).sort()).toEqual(["SESSION_LOCKED", "holding ok"]);
    const list = await SessionManager.listAll({ root });
    expect(list).toHaveLength(1);
    const s = await SessionManager.open(list[0]!.path, { root, readOnly: true });
    expect(s.getEntries()).toHaveLength(1);
  }, 60_000);

  it("two writers racing to fork the same session: one wins, the other gets SESSION_LOCKED", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "start"), { root });
    m.appendMessage({ role: "user", content: "fork me" });
    await m.close();
    const before = readFileSync(m.sessionFile!);
    const outs = await race("fork-writer", m.sessionFile!, root);
    expect(outs.map((lines) => lines.join(" ")).sort()).toEqual(["SESSION_LOCKED", "holding ok"]);
    expect(readFileSync(m.sessionFile!).equals(before)).toBe(true);
    expect(await SessionManager.listAll({ root })).toHaveLength(2);
  }, 60_000);

  it("two processes racing to fork with the lock-free forkFrom both succeed without touching the source", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "start"), { root });
    m.appendMessage({ role: "user", content: "fork me" });
    await m.close();
    const before = readFileSync(m.sessionFile!);
    const outs = await Promise.all(["a", "b"].map((tag) => runTs(RACER, ["fork", m.sessionFile!, root, tag])));
    expect(outs.map((o) => o.stdout.trim())).toEqual(["ok", "ok"]);
    expect(readFileSync(m.sessionFile!).equals(before)).toBe(true);
    expect(await SessionManager.listAll({ root })).toHaveLength(3);
  }, 60_000);
});
