import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import type { IncognitoSessionStorage } from "../../src/storage/incognito-session.ts";
import { onLines, spawnTs } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers/incognito-child.ts");

const savedTmp = process.env.TMPDIR;
afterEach(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
});

/** Everything under `dir`, relative (empty when absent). */
function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).sort();
}

/** The files under `tmp` that this library made (`transcript-store-*`). */
function filesOfOurs(tmp: string): string[] {
  return tree(tmp).filter((p) => p.startsWith("transcript-store") && statSync(join(tmp, p)).isFile());
}

/**
 * Runs the child with its own temp dir; resolves with the incognito temp dir it printed (once it
 * printed it) and, when the child is done, how it ended. `kill`: SIGKILL it as soon as it printed.
 */
function runChild(mode: string, root: string): Promise<{ dir: string; code: number | null; signal: string | null }> {
  const child = spawnTs(CHILD, [mode, root]);
  // the child inherits process.env: its os.tmpdir() is the test's TMPDIR
  return new Promise((resolve, reject) => {
    let dir = "";
    child.on("error", reject);
    onLines(child, (line) => {
      if (dir !== "") return;
      dir = line;
      if (mode === "wait") child.kill("SIGKILL");
    });
    child.on("close", (code, signal) => resolve({ dir, code, signal }));
  });
}

describe("an incognito session leaves nothing in the OS temp dir after any exit", () => {
  for (const mode of ["exit", "throw"]) {
    it(`a process that ends without close() (${mode}) removes its artifacts and agent outputs`, async () => {
      const tmp = tempDir("ts-incog-tmp-");
      process.env.TMPDIR = tmp;
      const root = tempDir("ts-incog-root-");
      const { dir, code } = await runChild(mode, root);
      expect(dir.startsWith(tmp)).toBe(true);
      expect(code).not.toBeNull();
      expect(existsSync(dir)).toBe(false);
      // no file of ours anywhere in the temp dir (tsx keeps its own cache there)
      expect(filesOfOurs(tmp)).toEqual([]);
      expect(tree(root)).toEqual([]);
    });
  }

  it("what a SIGKILLed process left is reclaimed by the next incognito session's first artifact", async () => {
    const tmp = tempDir("ts-incog-tmp-");
    process.env.TMPDIR = tmp;
    const root = tempDir("ts-incog-root-");
    const { dir, signal } = await runChild("wait", root);
    expect(signal).toBe("SIGKILL");
    // the killed process could not clean up: its directory (artifact, agent output) is still there
    expect(tree(dir).some((p) => p.includes("reviewer") || p.includes("agent"))).toBe(true);
    const sm = await SessionManager.create(join(root, "project"), { root, incognito: true });
    sm.artifacts!.save("mine", { toolType: "bash" });
    const mine = (sm.storage as IncognitoSessionStorage).artifactsTempDir!;
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(mine)).toBe(true);
    await sm.close();
    expect(existsSync(mine)).toBe(false);
    expect(tree(root)).toEqual([]);
    expect(filesOfOurs(tmp)).toEqual([]);
  });
});
