import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { io } from "../../src/io.ts";
import { recoverTrash, trashDirOf } from "../../src/lifecycle/file-trash.ts";
import { Lifecycle } from "../../src/lifecycle/lifecycle.ts";
import { artifactsDirOf } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

/*
 * Outside review of issue 32 #2: two processes at once. Every lifecycle command first recovers the
 * trash (`recoverTrash`), and a journal in the middle of a step reads the same whether its process
 * was killed or is still at work. A second command's recovery while a restore is half done (its
 * artifacts back, its session file not yet) must not undo it under the first: the session ends up
 * whole, live or in the trash, never live without its artifacts.
 */

const realRename = io.renameSync;
afterEach(() => {
  io.renameSync = realRename;
});

describe("a trash step in progress in one process meets another command's recovery", () => {
  it("a restore half done is left alone by a concurrent recovery: the session comes back whole", async () => {
    const root = tempDir("trash-race-");
    const sm = await SessionManager.create(join(root, "proj"), { root });
    sm.appendMessage({ role: "user", content: "keep my artifact" });
    const saved = sm.artifacts!.save("the artifact's bytes\n", { toolType: "bash" });
    await sm.close();
    const file = sm.sessionFile!;
    const life = Lifecycle.open({ root });
    const entry = await life.rm(sm.sessionId);
    expect(existsSync(file)).toBe(false);

    // A second process's command (any lifecycle command recovers first) runs right after the restore
    // moved the artifacts back and before it moves the session file.
    let raced: Promise<void> | null = null;
    io.renameSync = ((from: string, to: string) => {
      realRename(from, to);
      if (raced === null && to === artifactsDirOf(file)) {
        raced = recoverTrash({ root, blobsDir: join(root, "blobs"), lockStaleMs: 30_000 }).catch(() => {});
      }
    }) as typeof io.renameSync;
    let error: unknown = null;
    try {
      await life.restore(entry.trashId);
    } catch (err) {
      error = err;
    }
    io.renameSync = realRename;
    await raced;
    expect(raced).not.toBeNull();

    const live = existsSync(file);
    const trash = readdirSync(trashDirOf(root));
    if (live) {
      // restored: whole, and nothing of it left in the trash
      expect([error, existsSync(artifactsDirOf(file))]).toEqual([null, true]);
      expect(trash).toEqual([]);
      const again = await SessionManager.open(file, { root });
      expect(again.artifacts!.getText(saved.id)).toBe("the artifact's bytes\n");
      await again.close();
    } else {
      // refused: whole in the trash, listed, restorable
      expect((error as { code?: string }).code).toBeDefined();
      expect((await life.listTrash()).map((e) => e.trashId)).toEqual([entry.trashId]);
    }
  });
});
