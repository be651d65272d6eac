import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { io } from "../../src/io.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

const ndjson = `${[
  { type: "session", version: 3, id: "0197a000-0000-7000-8000-00000000abcd", timestamp: "2025-05-01T00:00:00.000Z", cwd: "/home/u/imp" },
  { type: "message", id: "aaaaaaaa", parentId: null, timestamp: "t", message: { role: "user", content: "hi" } },
]
  .map((r) => JSON.stringify(r))
  .join("\n")}\n`;

describe("transcript-store import never replaces an existing session", () => {
  it("a session that appears at the target after the existence check is kept (exit 1)", async () => {
    const root = tempDir();
    const first = await cli(["import", "--root", root, "--json"], { stdin: ndjson });
    expect(first.code).toBe(0);
    const path = first.records[0]!.path as string;
    const m = await SessionManager.open(path, { root });
    m.appendMessage({ role: "user", content: "continued" });
    await m.close();
    const before = readFileSync(path);
    // The session appears between a check and the write: a check that says "absent" must not matter.
    const original = io.existsSync;
    io.existsSync = ((p: Parameters<typeof io.existsSync>[0]) => (p === path ? false : original(p))) as typeof io.existsSync;
    let again;
    try {
      again = await cli(["import", "--root", root], { stdin: ndjson });
    } finally {
      io.existsSync = original;
    }
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already exists");
  });
});
