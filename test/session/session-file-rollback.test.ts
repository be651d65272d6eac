import { appendFileSync, readFileSync, writeSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { injectFault } from "../support/fault.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("a failed append's rollback", () => {
  it("never cuts lines another writer appended after ours (a lost lock)", async () => {
    const root = tempDir();
    const m = await SessionManager.create(root, { root });
    m.appendMessage({ role: "user", content: "mine" });
    // Another writer (one that took the lock over) appends behind this writer's back.
    const theirs = { type: "message", id: "f1", parentId: null, timestamp: "t", message: { role: "user", content: "theirs" } };
    const foreign = `${JSON.stringify(theirs)}\n`;
    appendFileSync(m.sessionFile!, foreign);
    const before = readFileSync(m.sessionFile!);
    const restore = injectFault("writeSync", (call, args) => {
      if (call !== 0) return undefined;
      const [fd, buf] = args as [number, Uint8Array];
      writeSync(fd, buf.subarray(0, 10));
      return "EIO";
    });
    try {
      expect(() => m.appendMessage({ role: "assistant", content: "x".repeat(100) })).toThrow(
        expect.objectContaining({ code: "PERSISTENCE_FAILED" }),
      );
    } finally {
      restore();
    }
    const after = readFileSync(m.sessionFile!);
    // The foreign line is intact (only our 10 bytes follow it); later appends refuse to go on.
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    expect(() => m.appendMessage({ role: "user", content: "again" })).toThrow(expect.objectContaining({ code: "PERSISTENCE_FAILED" }));
    expect(readFileSync(m.sessionFile!).equals(after)).toBe(true);
    await m.close();
  });
});
