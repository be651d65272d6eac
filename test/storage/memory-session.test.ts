import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("an in-memory session", () => {
  it("forks into the store of its options through the seam: a new session file holding its entries", async () => {
    const root = tempDir();
    const m = SessionManager.inMemory(join(root, "project"), { root });
    m.appendMessage({ role: "user", content: "hello" });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "hi" }] } as never);
    const fork = await m.fork();
    await fork.flush();
    const path = fork.sessionFile!;
    const lines = readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ type: "session", id: fork.sessionId, parentSession: m.sessionId });
    expect(lines.slice(1).map((e) => e.id)).toEqual(m.getEntries().map((e) => e.id));
    expect(fork.getEntries().map((e) => e.id)).toEqual(m.getEntries().map((e) => e.id));
    await fork.close();
    const again = await SessionManager.open(path, { root });
    expect(again.getEntries().map((e) => e.id)).toEqual(m.getEntries().map((e) => e.id));
    await again.close();
  });
});
