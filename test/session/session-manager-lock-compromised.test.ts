import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("a compromised lock", () => {
  it("turns the manager read-only with a warning instead of crashing the process", async () => {
    const root = tempDir();
    const warnings: StoreWarning[] = [];
    let compromised: () => void = () => {};
    const noticed = new Promise<void>((resolve) => (compromised = resolve));
    const onWarning = (w: StoreWarning) => {
      warnings.push(w);
      if (w.code === "LOCK_COMPROMISED") compromised();
    };
    const m = await SessionManager.create(root, { root, lockStaleMs: 2000, onWarning });
    m.appendMessage({ role: "user", content: "before" });
    rmSync(`${m.sessionFile}.lock`, { recursive: true, force: true }); // someone removed our lock
    // proper-lockfile notices on its next heartbeat (every lockStaleMs / 2); wait for that event, however late
    await noticed;
    expect(warnings.map((w) => w.code)).toContain("LOCK_COMPROMISED");
    expect(m.isReadOnly).toBe(true);
    expect(() => m.appendMessage({ role: "user", content: "after" })).toThrow(expect.objectContaining({ code: "READ_ONLY" }));
    await m.close();
    const reopened = await SessionManager.open(m.sessionFile!, { root });
    expect(reopened.getEntries()).toHaveLength(1);
    await reopened.close();
  });
});
