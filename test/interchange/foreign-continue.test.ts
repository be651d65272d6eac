import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { exportForeign, foreignLineBytes, type ForeignExportLine } from "../../src/interchange/export-foreign.ts";
import type { InterchangeFormat } from "../../src/interchange/foreign-entry.ts";
import { importForeignFile } from "../../src/interchange/import-foreign.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

const FIXTURES = join(import.meta.dirname, "../fixtures/foreign");
const CLAUDE = join(FIXTURES, "claude-code/v2.1.39-trimmed-258c7280.jsonl");
const CODEX = join(FIXTURES, "codex/v0.129.0-turn-2.jsonl");

type Rec = Record<string, any>;

async function collect(gen: AsyncGenerator<ForeignExportLine, unknown>): Promise<{ lines: ForeignExportLine[]; summary: any }> {
  const lines: ForeignExportLine[] = [];
  let step = await gen.next();
  while (step.done !== true) {
    lines.push(step.value);
    step = await gen.next();
  }
  return { lines, summary: step.value };
}

const recordOf = (l: ForeignExportLine): Rec => ("record" in l ? (l.record as Rec) : {});

/** Imports `file` and continues the session here: a prompt, a tool call, its result, an answer. */
async function importAndContinue(root: string, format: InterchangeFormat, file: string) {
  const report = await importForeignFile(format, file, { root });
  expect(report.status).toBe("created");
  const m = await SessionManager.open(report.location!, { root });
  const t0 = Date.parse("2026-06-01T10:00:00.000Z");
  m.appendMessage({ role: "user", content: "Continue here: list the files.", timestamp: t0 });
  m.appendMessage({
    role: "assistant",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    content: [
      { type: "text", text: "Listing." },
      { type: "toolCall", id: "toolu_cont1", name: "Bash", arguments: { command: "ls" } },
    ],
    stopReason: "toolUse",
    timestamp: t0 + 1000,
  });
  m.appendMessage({
    role: "toolResult",
    toolCallId: "toolu_cont1",
    toolName: "Bash",
    content: [{ type: "text", text: "a.txt\nb.txt" }],
    isError: false,
    timestamp: t0 + 2000,
  });
  m.appendMessage({
    role: "assistant",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    content: [{ type: "text", text: "Two files: a.txt and b.txt." }],
    stopReason: "stop",
    timestamp: t0 + 3000,
  });
  await m.close();
  return report;
}

const sourceLines = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe("export back to the agent a session imported from it and continued here", () => {
  it("Claude Code: the source's records, then the continued turns as Claude records chained to them", async () => {
    const root = tempDir();
    const report = await importAndContinue(root, "claude-code", CLAUDE);
    const warnings: StoreWarning[] = [];
    const { lines, summary } = await collect(
      exportForeign("claude-code", report.id, { root, redactOutput: false, onWarning: (w) => warnings.push(w) }),
    );
    const source = sourceLines(CLAUDE);
    expect(lines.slice(0, source.length).map(recordOf)).toEqual(source);
    const added = lines.slice(source.length).map(recordOf);
    expect(summary.skipped).toBe(0);
    expect(added.map((r) => r.type)).toEqual(["user", "assistant", "user", "assistant"]);
    // chained to the source's last record in the uuid chain, under the source's own session id
    const lastUuid = [...source].reverse().find((r) => typeof r.uuid === "string").uuid;
    expect(added[0]!.parentUuid).toBe(lastUuid);
    for (let i = 1; i < added.length; i++) expect(added[i]!.parentUuid).toBe(added[i - 1]!.uuid);
    for (const r of added) {
      expect(r.sessionId).toBe("258c7280-ae70-4798-800f-63464d01a85d");
      expect(r.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(new Date(r.timestamp).toISOString()).toBe(r.timestamp);
    }
    expect(added[0]!.message.content).toBe("Continue here: list the files.");
    expect(added[1]!.message.content).toEqual([
      { type: "text", text: "Listing." },
      { type: "tool_use", id: "toolu_cont1", name: "Bash", input: { command: "ls" } },
    ]);
    expect(added[2]!.message.content[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_cont1" });
    expect(added[3]!.message.content).toEqual([{ type: "text", text: "Two files: a.txt and b.txt." }]);

    // our importer reads the exported file back whole: the source plus the continuation
    const file = join(tempDir(), "back.jsonl");
    writeFileSync(file, Buffer.concat(lines.map(foreignLineBytes)));
    const again = await importForeignFile("claude-code", file, { root: tempDir() });
    expect(again.counts.records).toBe(lines.length);
    expect(again.problems).toEqual([]);
  });

  it("Codex: the source's lines, then the continued turns as response items (no second session_meta)", async () => {
    const root = tempDir();
    const report = await importAndContinue(root, "codex", CODEX);
    const { lines, summary } = await collect(exportForeign("codex", report.id, { root, redactOutput: false }));
    const source = sourceLines(CODEX);
    expect(lines.slice(0, source.length).map(recordOf)).toEqual(source);
    const added = lines.slice(source.length).map(recordOf);
    expect(summary.skipped).toBe(0);
    expect(added.some((r) => r.type === "session_meta")).toBe(false);
    const items = added.filter((r) => r.type === "response_item" && r.payload.type !== "transcript_store").map((r) => r.payload);
    expect(items.map((p) => [p.type, p.role ?? null])).toEqual([
      ["message", "user"],
      ["message", "assistant"],
      ["function_call", null],
      ["function_call_output", null],
      ["message", "assistant"],
    ]);
    expect(items[2]).toMatchObject({ name: "Bash", call_id: "toolu_cont1", arguments: JSON.stringify({ command: "ls" }) });
    expect(items[3]).toMatchObject({ call_id: "toolu_cont1", output: "a.txt\nb.txt" });
    for (const r of added) expect(new Date(r.timestamp).toISOString()).toBe(r.timestamp);
  });

  it("the CLI exports the continuation (exit 0, no 'not exported' note); a turn left out (another branch) is exit 1", async () => {
    const root = tempDir();
    const report = await importAndContinue(root, "claude-code", CLAUDE);
    const ok = await cli(["export", report.id, "--to", "claude-code", "--no-redact", "--root", root]);
    expect(ok.code).toBe(0);
    expect(ok.stderr).not.toMatch(/not exported/);
    expect(ok.stdout).toContain("Two files: a.txt and b.txt.");
    // a branch made here beside the continuation: not on the exported path, so it is left out, reported, exit 1
    const m = await SessionManager.open(report.location!, { root });
    const firstAdded = m.getEntries().find((e) => (e as Rec).message?.content === "Continue here: list the files.")!;
    m.branch(firstAdded.id);
    m.appendMessage({ role: "user", content: "Another way.", timestamp: Date.parse("2026-06-02T00:00:00Z") });
    const leaf = m.getLeafId()!;
    await m.close();
    const partial = await cli(["export", report.id, "--to", "claude-code", "--no-redact", "--root", root]);
    expect(partial.stdout).toContain("Another way.");
    expect(partial.stdout).not.toContain("Two files: a.txt and b.txt.");
    expect(partial.stderr).toMatch(/EXPORT_INCOMPLETE/);
    expect(partial.code).toBe(1);
    expect(leaf).toBeTruthy();
  });
});

describe("a conversion that leaves a branch out says so", () => {
  it("a native session with two branches converts its leaf's path; the other branch is EXPORT_INCOMPLETE, exit 1", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "proj"), { root });
    const u1 = m.appendMessage({ role: "user", content: "first question", timestamp: 1 });
    m.appendMessage({
      role: "assistant",
      provider: "anthropic",
      model: "m",
      content: [{ type: "text", text: "OLD-ANSWER" }],
      timestamp: 2,
    });
    m.branch(u1);
    m.appendMessage({
      role: "assistant",
      provider: "anthropic",
      model: "m",
      content: [{ type: "text", text: "NEW-ANSWER" }],
      timestamp: 3,
    });
    const leaf = m.getLeafId()!;
    const id = m.sessionId;
    await m.close();
    for (const format of ["claude-code", "codex"]) {
      const whole = await cli(["export", id, "--to", format, "--root", root]);
      expect(whole.stdout).toContain("NEW-ANSWER");
      expect(whole.stdout).not.toContain("OLD-ANSWER");
      expect(whole.stderr).toMatch(/EXPORT_INCOMPLETE/);
      expect(whole.code).toBe(1);
      // naming the branch is asking for that path only: nothing left out
      const named = await cli(["export", id, "--to", format, "--branch", leaf, "--root", root]);
      expect(named.stderr).not.toMatch(/EXPORT_INCOMPLETE/);
      expect(named.code).toBe(0);
    }
  });
});
