import { statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

/** Blocks the event loop (no sleep: nothing else may run meanwhile). */
function busy(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end);
}

/**
 * Resolves with `act()`'s result in the first event-loop turn in which the lock directory's mtime
 * on disk has moved from `before`: the library's refresh has changed the file, and its callback
 * (which runs in a later turn's poll phase) has not been seen yet.
 */
function whenLockMtimeMoves<T>(lockDir: string, before: number, act: () => T): Promise<T> {
  return new Promise((resolve, reject) => {
    const poll = () => {
      try {
        if (statSync(lockDir).mtimeMs !== before) return resolve(act());
        setImmediate(poll);
      } catch (err) {
        reject(err);
      }
    };
    setImmediate(poll);
  });
}

describe("lock heartbeat", () => {
  it("an append while the library's own refresh is in flight is not taken for a lost lock", async () => {
    const root = tempDir();
    const warnings: StoreWarning[] = [];
    // stale 2 s: the library refreshes every second, and appends trust the lock for one second.
    const manager = await SessionManager.create(join(root, "p"), { root, lockStaleMs: 2000, onWarning: (w) => warnings.push(w) });
    manager.appendMessage({ role: "user", content: "before" });
    manager.appendMessage({ role: "assistant", content: "written" });
    const lockDir = `${manager.sessionFile!}.lock`;
    for (let round = 0; round < 2; round++) {
      const appended = await whenLockMtimeMoves(lockDir, statSync(lockDir).mtimeMs, () => {
        // Past the trust window, so the append checks the lock on disk before writing.
        busy(150);
        return manager.appendMessage({ role: "user", content: `during refresh ${round}` });
      });
      expect(appended).toMatch(/^[0-9a-f]{8}$/);
    }
    expect(manager.isReadOnly).toBe(false);
    expect(warnings.filter((w) => w.code === "LOCK_COMPROMISED")).toEqual([]);
    await manager.close();
  });
});
