import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

// The engine's buildContext follows pi 1.5.2's rules (docs/format.md, Context at the leaf).
const system = (content: string) => ({ role: "system", content, timestamp: 1 });
const systemState = { role: "system", content: "base\n\nmore", timestamp: 1 };

describe("buildContext on pi 1.5.2 content", () => {
  it("system messages, context edits (latest on the branch wins, null omits), usage entries, a compaction's systemMessage", async () => {
    const m = await SessionManager.create(tempDir(), { root: tempDir() });
    m.appendMessage(system("base"));
    const u1 = m.appendMessage({ role: "user", content: "one" });
    const a1 = m.appendMessage({ role: "assistant", content: [{ type: "text", text: "two" }] });
    m.appendEntry({ type: "usage", kind: "cache_warm", provider: "p", model: "m", usage: { input: 1 } });
    m.appendEntry({ type: "context_edit", targetId: u1, replacement: { content: "first" } });
    m.appendEntry({ type: "context_edit", targetId: u1, replacement: { content: "edited one" } });
    m.appendEntry({ type: "context_edit", targetId: a1, replacement: { content: "short" } });
    const roles = () => m.buildContext().messages.map((x) => [x.role, x.content]);
    expect(roles()).toEqual([
      ["system", "base"],
      ["user", "edited one"],
      ["assistant", [{ type: "text", text: "short" }]],
    ]);
    const leaf = m.getLeafId()!;
    const omit = m.appendEntry({ type: "context_edit", targetId: a1, replacement: null });
    expect(roles().map((r) => r[0])).toEqual(["system", "user"]);
    // Branch-relative: back at the leaf before the omission, the answer is there again.
    m.branch(leaf);
    expect(roles().map((r) => r[0])).toEqual(["system", "user", "assistant"]);
    void omit;
    m.appendMessage(system("more"));
    const u2 = m.appendMessage({ role: "user", content: "three" });
    const c = m.appendEntry({ type: "compaction", summary: "S", firstKeptEntryId: u1, tokensBefore: 9, systemMessage: systemState });
    m.appendMessage({ role: "user", content: "four" });
    const ctx = m.buildContext();
    // The compaction's system message and summary, the kept range without its system messages (edits still apply), then the rest.
    expect(ctx.messages.map((x) => x.role)).toEqual(["system", "compactionSummary", "user", "assistant", "user", "user"]);
    expect(ctx.messages[0]).toEqual(systemState);
    expect(ctx.messages[2]!.content).toBe("edited one");
    void u2;
    void c;
    await m.close();
  });

  it("retain-none keeps nothing before it; an older compaction in the kept range and an empty branch summary add nothing", async () => {
    const root = tempDir();
    const path = join(tempDir(), "pi15.jsonl");
    const t = "2026-01-01T00:00:00.000Z";
    const records = [
      { type: "session", version: 3, id: "s", timestamp: t, cwd: "/x" },
      { type: "message", id: "u1", parentId: null, timestamp: t, message: { role: "user", content: "one" } },
      { type: "compaction", id: "c1", parentId: "u1", timestamp: t, summary: "all", firstKeptEntryId: "c1", tokensBefore: 1 },
      { type: "message", id: "u2", parentId: "c1", timestamp: t, message: { role: "user", content: "two" } },
    ];
    writeFileSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
    const m = await SessionManager.open(path, { root });
    expect(m.buildContext().messages.map((x) => x.summary ?? x.content)).toEqual(["all", "two"]);
    m.appendEntry({ type: "compaction", summary: "second", firstKeptEntryId: "c1", tokensBefore: 2 });
    expect(m.buildContext().messages.map((x) => x.summary ?? x.content)).toEqual(["second", "two"]);
    m.appendEntry({ type: "branch_summary", fromId: "root", summary: "" });
    expect(m.buildContext().messages.map((x) => x.summary ?? x.content)).toEqual(["second", "two"]);
    await m.close();
  });
});
