import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cliProcess } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

/** Sessions created at the same millisecond: their ids share the 12-digit time prefix. */
async function twins(root: string, titles: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const title of titles) {
    const m = await SessionManager.create("/proj", { root, now: () => new Date(Date.UTC(2026, 0, 2, 3, 4, 5)) });
    m.appendMessage({ role: "user", content: title, timestamp: 1 } as never);
    await m.close();
    ids.push(m.sessionId);
  }
  return ids;
}

describe("an ambiguous id prefix (issue 36 #9)", () => {
  it("lists its candidates one per line with time and title, as git does for a short SHA", async () => {
    const root = tempDir();
    const ids = await twins(root, ["first words", "second words"]);
    const run = await cliProcess(["show", ids[0]!.slice(0, 8), "--root", root]);
    expect(run.code).toBe(1);
    const lines = run.stderr.toString().split("\n");
    expect(lines[0]).toMatch(/SESSION_AMBIGUOUS: "[0-9a-f]{8}" matches 2 sessions/);
    expect(lines.slice(1, 3).sort()).toEqual(
      [`  ${ids[0]}  2026-01-02 03:04  first words`, `  ${ids[1]}  2026-01-02 03:04  second words`].sort(),
    );
    expect(run.stderr.toString()).not.toContain("\\n");
  });
});
