import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { artifactsDirOf, quarantinePathOf } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { injectFault } from "../support/fault.ts";
import { runTs } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers/writer-child.ts");

async function setup() {
  const root = tempDir();
  const oldCwd = join(root, "old-project");
  const newCwd = join(root, "new-project");
  const m = await SessionManager.create(oldCwd, { root });
  m.appendMessage({ role: "user", content: "hello" });
  m.appendMessage({ role: "assistant", content: "hi" });
  mkdirSync(m.artifactsDir!, { recursive: true });
  writeFileSync(join(m.artifactsDir!, "0.bash.log"), "artifact body");
  writeFileSync(quarantinePathOf(m.sessionFile!), '{"type":"quarantine","text":"x"}\n');
  return { root, oldCwd, newCwd, m };
}

/** The session is wholly at exactly one of its two places. */
function wholeAt(oldPath: string, newPath: string): "old" | "new" {
  const oldThere = existsSync(oldPath) && existsSync(artifactsDirOf(oldPath));
  const newThere = existsSync(newPath) && existsSync(artifactsDirOf(newPath));
  expect(oldThere !== newThere).toBe(true);
  return oldThere ? "old" : "new";
}

describe("moveTo", () => {
  it("moves file, artifacts and quarantine, rewrites the header cwd, and listings follow", async () => {
    const { root, oldCwd, newCwd, m } = await setup();
    const oldPath = m.sessionFile!;
    const entries = m.getEntries();
    await m.moveTo(newCwd);
    const newPath = m.sessionFile!;
    expect(newPath).not.toBe(oldPath);
    expect(existsSync(oldPath)).toBe(false);
    expect(existsSync(artifactsDirOf(oldPath))).toBe(false);
    expect(existsSync(quarantinePathOf(oldPath))).toBe(false);
    expect(readFileSync(join(artifactsDirOf(newPath), "0.bash.log"), "utf8")).toBe("artifact body");
    expect(existsSync(quarantinePathOf(newPath))).toBe(true);
    expect(m.cwd).toBe(newCwd);
    expect(JSON.parse(readFileSync(newPath, "utf8").split("\n")[0]!).cwd).toBe(newCwd);
    expect((await SessionManager.list(newCwd, { root })).map((s) => s.id)).toEqual([m.sessionId]);
    expect(await SessionManager.list(oldCwd, { root })).toEqual([]);
    // the manager keeps appending at the new place, and still holds the lock there
    m.appendMessage({ role: "user", content: "after move" });
    await expect(SessionManager.open(newPath, { root })).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    await m.close();
    const reopened = await SessionManager.open(newPath, { root });
    expect(reopened.getEntries().slice(0, 2)).toEqual(entries);
    expect(reopened.getEntries()).toHaveLength(3);
    await reopened.close();
  });

  it.each([0, 1, 2, 3, 4, 5])("a failure injected at rename/unlink step %i leaves the session whole at one place", async (failAt) => {
    const { root, newCwd, m } = await setup();
    const oldPath = m.sessionFile!;
    const before = readFileSync(oldPath);
    let calls = 0;
    const restoreRename = injectFault("renameSync", () => (calls++ === failAt ? "EIO" : undefined));
    const restoreUnlink = injectFault("unlinkSync", () => (calls++ === failAt ? "EIO" : undefined));
    let error: unknown = null;
    try {
      await m.moveTo(newCwd);
    } catch (err) {
      error = err;
    } finally {
      restoreRename();
      restoreUnlink();
    }
    const newPath = join(
      root,
      "sessions",
      readdirSync(join(root, "sessions")).find((b) => b.includes("new-project")) ?? "missing",
      oldPath.split("/").at(-1)!,
    );
    const where = wholeAt(oldPath, newPath);
    if (error !== null) {
      expect(error).toMatchObject({ code: "MOVE_FAILED" });
      expect(where).toBe("old");
      expect(readFileSync(oldPath).equals(before)).toBe(true);
      expect(
        readdirSync(join(root, "sessions"))
          .flatMap((b) => readdirSync(join(root, "sessions", b)))
          .filter((n) => n.endsWith(".tmp")),
      ).toEqual([]);
    } else {
      expect(where).toBe("new");
    }
    // either way the manager still works and the next move succeeds
    m.appendMessage({ role: "user", content: "still alive" });
    if (error !== null) await m.moveTo(newCwd);
    expect(existsSync(m.sessionFile!)).toBe(true);
    await m.close();
    const again = await SessionManager.open(m.sessionFile!, { root });
    expect(again.getEntries()).toHaveLength(3);
    expect(readFileSync(join(again.artifactsDir!, "0.bash.log"), "utf8")).toBe("artifact body");
    await again.close();
  });

  it("crosses file systems: EXDEV on the directory rename copies, verifies and deletes", async () => {
    const { newCwd, m } = await setup();
    const oldPath = m.sessionFile!;
    const restore = injectFault("renameSync", (_call, args) => (String(args[0]).endsWith(".tmp") ? undefined : "EXDEV"));
    try {
      await m.moveTo(newCwd);
    } finally {
      restore();
    }
    expect(existsSync(artifactsDirOf(oldPath))).toBe(false);
    expect(existsSync(quarantinePathOf(oldPath))).toBe(false);
    expect(readFileSync(join(m.artifactsDir!, "0.bash.log"), "utf8")).toBe("artifact body");
    expect(existsSync(quarantinePathOf(m.sessionFile!))).toBe(true);
    await m.close();
  });

  it("another process cannot open the session for writing before, during or after a move", async () => {
    const { root, newCwd, m } = await setup();
    const oldPath = m.sessionFile!;
    expect((await runTs(CHILD, ["try-open", oldPath, root])).stdout.trim()).toBe("SESSION_LOCKED");
    await m.moveTo(newCwd);
    expect((await runTs(CHILD, ["try-open", m.sessionFile!, root])).stdout.trim()).toBe("SESSION_LOCKED");
    await m.close();
    expect((await runTs(CHILD, ["try-open", m.sessionFile!, root])).stdout.trim()).toBe("ok");
  }, 60_000);

  it("a session whose cwd no longer exists is found by listAll and resolve, and can be re-rooted", async () => {
    const { root, newCwd, m } = await setup();
    await m.close();
    const all = await SessionManager.listAll({ root });
    expect(all.map((s) => s.id)).toEqual([m.sessionId]);
    const info = await SessionManager.resolve(m.sessionId.slice(0, 13), "/nowhere/at/all", { root });
    expect(info.path).toBe(m.sessionFile);
    const reopened = await SessionManager.open(info.path, { root });
    await reopened.moveTo(newCwd);
    expect((await SessionManager.list(newCwd, { root })).map((s) => s.id)).toEqual([m.sessionId]);
    await reopened.close();
  });
});

describe("moveTo before the first assistant message (deferUntilAssistant)", () => {
  it("moves like a written session: artifacts go along, the lock moves, a new bucket is created", async () => {
    const root = tempDir();
    const oldCwd = join(root, "old-project");
    const newCwd = join(root, "never-seen-project");
    const m = await SessionManager.create(oldCwd, { root, deferUntilAssistant: true });
    m.appendMessage({ role: "user", content: "hello" });
    const oldPath = m.sessionFile!;
    const saved = m.artifacts!.save("saved before any file", { toolType: "bash" });
    expect(existsSync(oldPath)).toBe(false);
    await m.moveTo(newCwd);
    const newPath = m.sessionFile!;
    expect(newPath).not.toBe(oldPath);
    expect(existsSync(artifactsDirOf(oldPath))).toBe(false);
    expect(m.artifacts!.getText(saved.id)).toBe("saved before any file");
    // the lock followed: the new path is taken, the old one is free
    await expect(SessionManager.open(newPath, { root })).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    const old = await SessionManager.open(oldPath, { root, deferUntilAssistant: true });
    await old.close();
    m.appendMessage({ role: "assistant", content: "hi" });
    expect(existsSync(oldPath)).toBe(false);
    await m.close();
    const reopened = await SessionManager.open(newPath, { root });
    expect(reopened.cwd).toBe(newCwd);
    expect(reopened.getEntries()).toHaveLength(2);
    expect(reopened.artifacts!.getText(saved.id)).toBe("saved before any file");
    await reopened.close();
  });

  it("a destination another session holds is SESSION_EXISTS (not MOVE_FAILED): nothing moves, nothing is replaced", async () => {
    const { root, newCwd, m } = await setup();
    const oldPath = m.sessionFile!;
    const before = readFileSync(oldPath);
    const other = await SessionManager.create(newCwd, { root });
    other.appendMessage({ role: "user", content: "the other session" });
    await other.close();
    const taken = join(dirname(other.sessionFile!), basename(oldPath));
    writeFileSync(taken, "held by another session\n");
    await expect(m.moveTo(newCwd)).rejects.toMatchObject({ code: "SESSION_EXISTS", path: taken });
    expect(readFileSync(taken, "utf8")).toBe("held by another session\n");
    expect(readFileSync(oldPath).equals(before)).toBe(true);
    expect(wholeAt(oldPath, taken)).toBe("old");
    await m.close();
  });

  it("a move within the same cwd is a no-op, not SESSION_LOCKED", async () => {
    const root = tempDir();
    const cwd = join(root, "project");
    const m = await SessionManager.create(cwd, { root, deferUntilAssistant: true });
    m.appendMessage({ role: "user", content: "hello" });
    const path = m.sessionFile!;
    await m.moveTo(cwd);
    expect(m.sessionFile).toBe(path);
    await expect(SessionManager.open(path, { root })).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    m.appendMessage({ role: "assistant", content: "hi" });
    await m.close();
    const reopened = await SessionManager.open(path, { root });
    expect(reopened.getEntries()).toHaveLength(2);
    await reopened.close();
  });
});
