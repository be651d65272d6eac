import { existsSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/pi/index.ts";
import { acquireSessionLock, acquireSessionLockSync, lockDeclarationPathOf } from "../../src/session/session-lock.ts";
import { onLines, spawnTs } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";
import { piHome } from "./helpers.ts";

const CHILD = join(import.meta.dirname, "helpers/facade-holder-child.ts");

describe("the facade's synchronous lock", () => {
  it("a session held by a live process is SESSION_LOCKED; once its holder died and the lock went stale it is taken over", async () => {
    const h = piHome();
    const child = spawnTs(CHILD, [h.agentDir, h.blobsDir, h.cwd]);
    const file = await new Promise<string>((resolve, reject) => {
      onLines(child, (line) => line.startsWith("file ") && resolve(line.slice(5)));
      child.once("close", (code) => reject(new Error(`child exited ${code}`)));
    });
    const opts = { agentDir: h.agentDir, blobsDir: h.blobsDir };
    expect(() => SessionManager.open(file, undefined, undefined, opts)).toThrow(expect.objectContaining({ code: "SESSION_LOCKED" }));
    expect(() => SessionManager.continueRecent(h.cwd, undefined, opts)).toThrow(expect.objectContaining({ code: "SESSION_LOCKED" }));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    // Still locked by the dead holder until its heartbeat is older than its declared stale period.
    expect(() => SessionManager.open(file, undefined, undefined, opts)).toThrow(expect.objectContaining({ code: "SESSION_LOCKED" }));
    const past = new Date(Date.now() - 60_000);
    utimesSync(`${file}.lock`, past, past);
    const taken = SessionManager.open(file, undefined, undefined, opts);
    expect(taken.getEntries()).toHaveLength(2);
    taken.appendMessage({ role: "user", content: "after takeover" });
    taken.close();
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("acquireSessionLockSync excludes async takers and itself, declares its stale period, releases synchronously", async () => {
    const path = join(tempDir(), "s.jsonl");
    const lock = acquireSessionLockSync(path, { staleMs: 30_000, onCompromised: () => {} });
    expect(existsSync(lockDeclarationPathOf(path))).toBe(true);
    expect(() => acquireSessionLockSync(path, { onCompromised: () => {} })).toThrow(expect.objectContaining({ code: "SESSION_LOCKED" }));
    await expect(acquireSessionLock(path, { onCompromised: () => {} })).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    // A lock aged past a taker's own 10 s but within the holder's declared 30 s is not taken over.
    const past = new Date(Date.now() - 15_000);
    utimesSync(`${path}.lock`, past, past);
    expect(() => acquireSessionLockSync(path, { staleMs: 10_000, onCompromised: () => {} })).toThrow(
      expect.objectContaining({ code: "SESSION_LOCKED" }),
    );
    lock.releaseSync();
    expect(existsSync(`${path}.lock`)).toBe(false);
    expect(existsSync(lockDeclarationPathOf(path))).toBe(false);
    const again = await acquireSessionLock(path, { onCompromised: () => {} });
    await again.release();
  });
});
