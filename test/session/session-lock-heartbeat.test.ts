import { statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { heartbeatTiming } from "../../src/session/session-lock.ts";
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

  it("the library's refresh is due before appends stop trusting the lock (no refresh per append in a briefly blocked loop)", () => {
    // The default stale period: refreshed every 3.3 s, trusted for 5 s after each refresh (was 5 s and 5 s).
    expect(heartbeatTiming(10_000, 10_000)).toEqual({ updateMs: 3333, trustedMs: 5000 });
    for (const stale of [3000, 10_000, 60_000]) {
      const { updateMs, trustedMs } = heartbeatTiming(stale, stale);
      expect(trustedMs - updateMs).toBeGreaterThanOrEqual(stale / 6 - 1);
    }
    // A holder whose declared stale period is shorter is refreshed often enough for it.
    expect(heartbeatTiming(30_000, 6000).updateMs).toBe(2000);
    // proper-lockfile's floor: never more often than once a second.
    expect(heartbeatTiming(2000, 2000)).toEqual({ updateMs: 1000, trustedMs: 1000 });
  });
});
