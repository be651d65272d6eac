import { existsSync, readdirSync, readFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Lifecycle } from "../../src/lifecycle/lifecycle.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { runTs } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers/lifecycle-child.ts");

/** Every file under `dir` with its bytes, lock leftovers of a killed process left out. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name.endsWith(".lock") || e.name.endsWith(".lock.json")) continue;
      const r = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(join(d, e.name), r);
      else out.set(r, readFileSync(join(d, e.name)).toString("base64"));
    }
  };
  walk(dir, "");
  return out;
}

async function fixture(): Promise<{ root: string; id: string; path: string; before: Map<string, string> }> {
  const root = tempDir();
  const m = await SessionManager.create("/crash", { root });
  m.appendMessage({ role: "user", content: "keep me", timestamp: 1 } as never);
  m.artifacts!.save("artifact bytes\n", { toolType: "bash" });
  await m.close();
  return { root, id: m.sessionId, path: m.location!, before: snapshot(join(root, "sessions")) };
}

/** The killed child's lock looks as old as a dead writer's (no waiting for its stale period). */
function ageLock(path: string): void {
  const old = new Date(Date.now() - 3_600_000);
  if (existsSync(`${path}.lock`)) utimesSync(`${path}.lock`, old, old);
}

/** After recovery the session is in place (bytes as before) or in the trash (restoring gives them back). */
async function expectInPlaceOrTrash(root: string, id: string, path: string, before: Map<string, string>): Promise<"place" | "trash"> {
  const life = Lifecycle.open({ root });
  const trash = await life.listTrash();
  if (existsSync(path)) {
    expect(trash).toEqual([]);
    expect(snapshot(join(root, "sessions"))).toEqual(before);
    return "place";
  }
  expect(trash.map((e) => e.sessionId)).toEqual([id]);
  await life.restore(id);
  expect(snapshot(join(root, "sessions"))).toEqual(before);
  return "trash";
}

describe("a crash (SIGKILL) in the middle of rm or restore loses nothing", () => {
  it("rm killed after each of its renames: the session is in place or in the trash", { timeout: 120_000 }, async () => {
    const outcomes: string[] = [];
    for (let n = 1; ; n++) {
      const { root, id, path, before } = await fixture();
      const run = await runTs(CHILD, ["rm", root, id, String(n)]);
      if (run.code === 0) {
        expect(run.stdout).toMatch(/^done \d+/);
        break;
      }
      expect(run.code).toBe(null); // killed by the signal
      ageLock(path);
      outcomes.push(await expectInPlaceOrTrash(root, id, path, before));
    }
    // a kill before the session file moved undoes the removal; after it, the removal stands
    expect(outcomes[0]).toBe("place");
    expect(outcomes.at(-1)).toBe("trash");
  });

  it("restore killed after each of its renames: the session is in the trash or back in place", { timeout: 120_000 }, async () => {
    const outcomes: string[] = [];
    for (let n = 1; ; n++) {
      const { root, id, path, before } = await fixture();
      await Lifecycle.open({ root }).rm(id);
      const run = await runTs(CHILD, ["restore", root, id, String(n)]);
      if (run.code === 0) break;
      expect(run.code).toBe(null);
      ageLock(path); // restore holds the session's lock too (a concurrent recovery leaves it alone)
      outcomes.push(await expectInPlaceOrTrash(root, id, path, before));
    }
    expect(outcomes[0]).toBe("trash");
    expect(outcomes.length).toBeGreaterThanOrEqual(2);
  });

  it("purge killed once its journal says purging: the next lifecycle command finishes it", { timeout: 60_000 }, async () => {
    const { root, id, path } = await fixture();
    await Lifecycle.open({ root }).rm(id);
    const [entry] = readdirSync(join(root, "trash"));
    // rename 1 declares the session's lock (purge holds it), rename 2 writes the journal "purging"
    const run = await runTs(CHILD, ["purge", root, id, "2"]);
    expect(run.code).toBe(null);
    ageLock(path); // purge holds the session's lock too
    expect(JSON.parse(readFileSync(join(root, "trash", entry!, "trash.json"), "utf8")).state).toBe("purging");
    expect(await Lifecycle.open({ root }).listTrash()).toEqual([]);
    expect(readdirSync(join(root, "trash"))).toEqual([]);
  });
});
