import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("line encoding shared by writers", () => {
  it("interleaved appends of many sessions, short, long and multi-byte, land byte-exact in each file", async () => {
    const root = tempDir();
    const sessions = await Promise.all([0, 1, 2].map(() => SessionManager.create(join(root, "cwd"), { root })));
    const texts = ["a", "é😀".repeat(3000), "b".repeat(10), "x".repeat(450_000), "ü", "c".repeat(70_000), "short"];
    const expected = new Map<SessionManager, unknown[]>(sessions.map((s) => [s, []]));
    for (const [i, text] of texts.entries()) {
      for (const [k, s] of sessions.entries()) {
        // A line past the shared buffer's limit (4 blocks of 450,000 units) gets a buffer of its own.
        const content = text.length > 400_000 ? [0, 1, 2, 3].map((b) => ({ type: "text", text: `${k}.${b}:${text}` })) : `${k}:${text}`;
        s.appendMessage({ role: i % 2 ? "assistant" : "user", content });
        expected.get(s)!.push(content);
      }
    }
    for (const s of sessions) {
      const lines = readFileSync(s.sessionFile!, "utf8").split("\n");
      expect(lines.pop()).toBe("");
      const contents = lines.slice(1).map((line) => JSON.parse(line).message.content);
      // Compared as one boolean: a failure must not print megabytes.
      expect(JSON.stringify(contents) === JSON.stringify(expected.get(s))).toBe(true);
      // Each line is exactly the entry's JSON: no bytes of another session's longer line after it.
      for (const line of lines) expect(JSON.stringify(JSON.parse(line))).toBe(line);
      await s.close();
    }
  });
});
