import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { onLines, spawnTs } from "../support/child.ts";
import { injectFault } from "../support/fault.ts";
import { tempDir } from "../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers/writer-child.ts");

async function sessionWithArtifacts(root: string, onWarning?: (w: StoreWarning) => void) {
  const m = await SessionManager.create(join(root, "proj"), { root, onWarning });
  const a = m.appendMessage({ role: "user", content: "a" });
  const b = m.appendMessage({ role: "assistant", content: "b" });
  m.branch(a);
  const c = m.appendMessage({ role: "assistant", content: "c" });
  mkdirSync(m.artifactsDir!, { recursive: true });
  writeFileSync(join(m.artifactsDir!, "0.bash.log"), "x".repeat(1000));
  return { m, a, b, c };
}

describe("fork", () => {
  it("copies entries, ids and leaf; parentSession is the source; artifacts are hard links", async () => {
    const root = tempDir();
    const { m, a, c } = await sessionWithArtifacts(root);
    const sourceBytes = readFileSync(m.sessionFile!);
    const fork = await m.fork();
    expect(fork.sessionId).not.toBe(m.sessionId);
    expect(fork.header.parentSession).toBe(m.sessionId);
    expect(fork.getEntries()).toEqual(m.getEntries());
    expect(fork.getLeafId()).toBe(c);
    expect(fork.getBranch().map((e) => e.id)).toEqual([a, c]);
    const src = join(m.artifactsDir!, "0.bash.log");
    const dst = join(fork.artifactsDir!, "0.bash.log");
    expect(statSync(dst).ino).toBe(statSync(src).ino);
    // the source manager keeps working and its file is untouched by the fork
    expect(readFileSync(m.sessionFile!).equals(sourceBytes)).toBe(true);
    m.appendMessage({ role: "user", content: "source goes on" });
    fork.appendMessage({ role: "user", content: "fork goes on" });
    expect(m.getEntries()).toHaveLength(4);
    expect(fork.getEntries()).toHaveLength(4);
    await fork.close();
    const reopened = await SessionManager.open(fork.sessionFile!, { root });
    expect(reopened.header.parentSession).toBe(m.sessionId);
    expect(reopened.getEntries().slice(0, 3)).toEqual(m.getEntries().slice(0, 3));
    await reopened.close();
    await m.close();
  });

  it("atEntryId keeps only the path root → that entry", async () => {
    const root = tempDir();
    const { m, a, b } = await sessionWithArtifacts(root);
    const fork = await m.fork({ atEntryId: b });
    expect(fork.getEntries().map((e) => e.id)).toEqual([a, b]);
    expect(fork.getLeafId()).toBe(b);
    await expect(m.fork({ atEntryId: "nope0000" })).rejects.toMatchObject({ code: "ENTRY_NOT_FOUND" });
    await fork.close();
    await m.close();
  });

  it("an unreadable artifact is one warning and the fork completes; temp files are copied, not linked", async () => {
    const root = tempDir();
    const warnings: StoreWarning[] = [];
    const { m } = await sessionWithArtifacts(root, (w) => warnings.push(w));
    writeFileSync(join(m.artifactsDir!, ".partial.tmp"), "in flight");
    writeFileSync(join(m.artifactsDir!, "secret.log"), "s");
    // EACCES for that one file, whoever runs the test (root reads anything, so inject it)
    const denied = (_c: number, args: unknown[]) => (String(args[0]).endsWith("secret.log") ? "EACCES" : undefined);
    const restoreLink = injectFault("linkSync", denied);
    const restoreCopy = injectFault("copyFileSync", denied);
    let fork;
    try {
      fork = await m.fork();
    } finally {
      restoreLink();
      restoreCopy();
    }
    const names = readdirSync(fork.artifactsDir!).sort();
    expect(names).toEqual([".partial.tmp", "0.bash.log"]);
    expect(statSync(join(fork.artifactsDir!, ".partial.tmp")).ino).not.toBe(statSync(join(m.artifactsDir!, ".partial.tmp")).ino);
    expect(warnings.map((w) => [w.code, w.path])).toEqual([["ARTIFACT_COPY_FAILED", join(m.artifactsDir!, "secret.log")]]);
    expect(fork.getEntries()).toEqual(m.getEntries());
    await fork.close();
    await m.close();
  });

  it("a symlink planted in the artifacts directory is never followed into the fork", async () => {
    const root = tempDir();
    const warnings: StoreWarning[] = [];
    const { m } = await sessionWithArtifacts(root, (w) => warnings.push(w));
    symlinkSync("/etc/passwd", join(m.artifactsDir!, "1.evil.log"));
    const fork = await m.fork();
    expect(readdirSync(fork.artifactsDir!)).toEqual(["0.bash.log"]);
    expect(warnings.map((w) => w.code)).toEqual(["ARTIFACT_COPY_FAILED"]);
    await fork.close();
    await m.close();
  });

  it("100 forks appending 10 entries each leave 100 distinct sessions and the source byte for byte", async () => {
    const root = tempDir();
    const { m } = await sessionWithArtifacts(root);
    await m.close();
    const sourceBytes = readFileSync(m.sessionFile!);
    const source = await SessionManager.open(m.sessionFile!, { root, readOnly: true });
    const ids = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const fork = await source.fork();
      for (let j = 0; j < 10; j++) fork.appendMessage({ role: j % 2 ? "assistant" : "user", content: `run ${i} step ${j}` });
      ids.add(fork.sessionId);
      await fork.close();
    }
    expect(ids.size).toBe(100);
    expect(readFileSync(m.sessionFile!).equals(sourceBytes)).toBe(true);
    const all = await SessionManager.listAll({ root });
    expect(all).toHaveLength(101);
    for (const info of all.filter((s) => s.id !== m.sessionId)) {
      const f = await SessionManager.open(info.path, { root, readOnly: true });
      expect(f.loadReport.malformed).toEqual([]);
      expect(f.getEntries()).toHaveLength(13);
      expect(f.header.parentSession).toBe(m.sessionId);
    }
  }, 120_000);

  it("forkFrom works while another process holds the source's write lock", async () => {
    const root = tempDir();
    const path = join(root, "sessions", "live.jsonl");
    const child = spawnTs(CHILD, ["append", path, root, "5"]);
    await new Promise<void>((resolve) => {
      let n = 0;
      onLines(child, () => ++n >= 10 && resolve());
    });
    try {
      const fork = await SessionManager.forkFrom(path, join(root, "elsewhere"), { root });
      expect(fork.getEntries().length).toBeGreaterThanOrEqual(9);
      expect(fork.cwd).toBe(join(root, "elsewhere"));
      fork.appendMessage({ role: "user", content: "mine" });
      await fork.close();
      await expect(SessionManager.open(path, { root })).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    } finally {
      child.kill("SIGKILL");
    }
    expect(existsSync(path)).toBe(true);
  }, 60_000);
});
