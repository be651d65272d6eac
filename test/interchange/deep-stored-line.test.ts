import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

const ID = "0199aaaa-0000-7000-8000-0000000000d2";

/** A store holding a session file another program wrote, with one line nested 20,000 levels deep. */
function storeWithDeepLine(): string {
  const root = tempDir("ts-deep-line-");
  const dir = join(root, "sessions", "--p--");
  mkdirSync(dir, { recursive: true });
  const header = { type: "session", version: 3, id: ID, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" };
  const message = {
    type: "message",
    id: "m1",
    parentId: null,
    timestamp: "2026-01-01T00:00:01.000Z",
    message: { role: "user", content: "hello", timestamp: 1 },
  };
  const head = `{"type":"custom","customType":"x","id":"e1","parentId":"m1","timestamp":"2026-01-01T00:00:02.000Z"`;
  const deep = `${head},"data":${"[".repeat(20_000)}${"]".repeat(20_000)}}`;
  writeFileSync(join(dir, `2026-01-01T00-00-00-000Z_${ID}.jsonl`), `${JSON.stringify(header)}\n${JSON.stringify(message)}\n${deep}\n`);
  return root;
}

describe("a stored line nested 20,000 levels deep (written by another program)", () => {
  for (const argv of [
    ["export", ID, "--to", "claude-code"],
    ["export", ID, "--to", "codex"],
    ["bundle", ID, "-o", "out.tar"],
  ]) {
    it(`${argv[0]} ${argv.slice(2).join(" ")}: refused with a code, never a stack overflow`, async () => {
      const root = storeWithDeepLine();
      const run = await cli([...argv.map((a) => (a === "out.tar" ? join(root, a) : a)), "--root", root], { cwd: "/p" });
      expect(run.code).toBe(1);
      expect(run.stderr).not.toMatch(/call stack/);
      expect(run.stderr).toMatch(/PERSISTENCE_FAILED: a value nested deeper than 2000 levels/);
    });
  }
});
