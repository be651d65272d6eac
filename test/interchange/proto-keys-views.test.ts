import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionEntry, SessionHeader } from "../../src/format/types.ts";
import { atifChunks } from "../../src/interchange/atif.ts";
import { exportSession } from "../../src/interchange/export-session.ts";
import { toClaudeCode } from "../../src/interchange/to-claude-code.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { expectCode } from "../support/error-code.ts";
import { tempDir } from "../support/temp-dir.ts";

/**
 * Issue 32 #26's habit elsewhere: a name read from a transcript or the command line looked up in a
 * plain object finds Object.prototype's members (`constructor`, `toString`, `__proto__`).
 */
describe("lookups by a transcript's or user's name never find Object.prototype members", () => {
  it("ATIF counts entries of types named constructor / __proto__ / toString as they are", () => {
    const entries = ["constructor", "__proto__", "toString", "constructor"].map((type, i) => ({
      type,
      id: `e${i}`,
      parentId: i === 0 ? null : `e${i - 1}`,
      timestamp: "t",
    })) as unknown as SessionEntry[];
    const header = { type: "session", version: 3, id: "s1", timestamp: "t", cwd: "/w" } as unknown as SessionHeader;
    const out = JSON.parse([...atifChunks({ header, entries, leafId: "e3", rehydrate: (v) => v, artifacts: [] })].join(""));
    // JSON.parse makes `__proto__` an own key: compare the entries
    expect(Object.entries(out.extra.transcript_store.unmapped_entries).sort()).toEqual([
      ["__proto__", 1],
      ["constructor", 2],
      ["toString", 1],
    ]);
  });

  it("Claude Code export: a stopReason named constructor has no stop_reason (null), like any unknown one", () => {
    const entries = [
      {
        type: "message",
        id: "e1",
        parentId: null,
        timestamp: "2026-01-01T00:00:00.000Z",
        message: { role: "assistant", content: [{ type: "text", text: "hi" }], stopReason: "constructor", model: "m", timestamp: 1 },
      },
    ] as unknown as SessionEntry[];
    const records = [...toClaudeCode(entries, { sessionId: "s1", cwd: "/w", warn: () => {} })];
    const assistant = records.find((r) => r.type === "assistant") as { message: { stop_reason: unknown } };
    expect(assistant.message.stop_reason).toBeNull();
  });

  it("exportSession: a format named toString is INVALID_OPTION; export --to constructor is a usage error", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "proj"), { root });
    m.appendMessage({ role: "user", content: "hi" });
    await m.close();
    const chunks: string[] = [];
    const run = async () => {
      for await (const chunk of exportSession(m.sessionFile!, { root, format: "toString" as never })) chunks.push(chunk);
    };
    await expectCode(run(), "INVALID_OPTION");
    expect(chunks).toEqual([]);
    const out = await cli(["--root", root, "export", m.sessionId, "--to", "constructor"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("--to must be one of");
  });
});
