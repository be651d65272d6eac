import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { exportForeign, foreignLineBytes } from "../../src/interchange/export-foreign.ts";
import { derivedSessionId, subagentOf, type InterchangeFormat } from "../../src/interchange/foreign-entry.ts";
import { importForeign, importForeignFile, type ForeignImportReport } from "../../src/interchange/import-foreign.ts";
import type { SessionEntry } from "../../src/format/types.ts";
import { tempDir } from "../support/temp-dir.ts";

const FIXTURES = join(import.meta.dirname, "../fixtures/foreign");
const CLAUDE_PARENT = join(FIXTURES, "subagents/claude-code/5a6b7c8d-0000-4000-8000-00000000c1a0.jsonl");
const CLAUDE_CHILD = join(FIXTURES, "subagents/claude-code/5a6b7c8d-0000-4000-8000-00000000c1a0/subagents/agent-a1b2c3d4e5f60718.jsonl");
const CODEX_PARENT = join(FIXTURES, "codex/v0.129.0-spawn-skill.jsonl");
const CODEX_CHILD = join(FIXTURES, "subagents/codex/rollout-2026-05-12T10-00-03-child-thread-uuid.jsonl");

async function opened(root: string, report: ForeignImportReport) {
  const m = await SessionManager.open(report.location!, { root, readOnly: true });
  try {
    return { header: m.header, entries: m.getEntries(), context: m.buildContext().messages };
  } finally {
    await m.close();
  }
}

function callIds(entries: readonly SessionEntry[]): string[] {
  return entries.flatMap((e) => {
    const content = (e.message as { content?: unknown } | undefined)?.content;
    return Array.isArray(content) ? content.filter((b) => b.type === "toolCall").map((b) => String(b.id)) : [];
  });
}

async function collectRecords(format: InterchangeFormat, id: string, root: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const l of exportForeign(format, id, { root })) if ("record" in l) out.push(l.record);
  return out;
}

const recordsOf = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));

describe("subagent transcripts name their parent; the parent's spawning entry names them", () => {
  it("Claude Code: <session>/subagents/agent-<id>.jsonl, spawned by a Task tool result (toolUseResult.agentId)", async () => {
    const root = tempDir("ts-subagent-");
    // the directory walk finds the parent and its subagents/ file
    const reports = await importForeign("claude-code", [join(FIXTURES, "subagents/claude-code")], { root });
    const parent = reports.find((r) => r.path === CLAUDE_PARENT)!;
    const child = reports.find((r) => r.path === CLAUDE_CHILD)!;
    expect(reports.map((r) => r.status)).toEqual(["created", "created"]);
    expect(child.id).not.toBe(parent.id);

    const c = await opened(root, child);
    expect(c.header.parentSession).toBe(parent.id);
    expect(c.header.foreign).toEqual({
      format: "claude-code",
      sessionId: "5a6b7c8d-0000-4000-8000-00000000c1a0:agent-a1b2c3d4e5f60718",
      parent: { sessionId: "5a6b7c8d-0000-4000-8000-00000000c1a0", agentId: "a1b2c3d4e5f60718" },
    });
    expect(c.context.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);

    const p = await opened(root, parent);
    expect(p.header.parentSession).toBeUndefined();
    const spawning = p.entries.filter((e) => subagentOf(e) !== null);
    expect(spawning).toHaveLength(1);
    expect(subagentOf(spawning[0]!)).toEqual({ session: child.id, toolCallId: "toolu_task1" });
    expect((spawning[0]!.message as { role: string }).role).toBe("toolResult");
    expect(callIds(p.entries)).toContain("toolu_task1");

    // idempotent, and the link does not depend on the order: the child alone in a fresh store gets the same header
    const again = await importForeign("claude-code", [join(FIXTURES, "subagents/claude-code")], { root });
    expect(again.map((r) => r.status)).toEqual(["unchanged", "unchanged"]);
    const alone = tempDir("ts-subagent-");
    const first = await importForeignFile("claude-code", CLAUDE_CHILD, { root: alone });
    expect(first.id).toBe(child.id);
    expect((await opened(alone, first)).header).toEqual(c.header);
    // both give their records back
    expect(await collectRecords("claude-code", child.id, root)).toEqual(recordsOf(CLAUDE_CHILD));
    expect(await collectRecords("claude-code", parent.id, root)).toEqual(recordsOf(CLAUDE_PARENT));
  });

  it("Claude Code 2.1.39, real: a Task spawn (agent a2898e3) and its subagent transcript, linked both ways", async () => {
    const root = tempDir("ts-subagent-");
    const dir = join(FIXTURES, "subagents/claude-code-real");
    const reports = await importForeign("claude-code", [dir], { root });
    expect(reports.map((r) => r.status)).toEqual(["created", "created"]);
    for (const r of reports) {
      expect(r.counts.records).toBe(recordsOf(r.path).length);
      expect(r.counts.mapped + r.counts.kept).toBe(r.counts.records);
    }
    const [parent, child] = reports.sort((a, b) => a.path.length - b.path.length) as [ForeignImportReport, ForeignImportReport];
    const c = await opened(root, child);
    expect(c.header.parentSession).toBe(parent.id);
    expect(c.header.foreign).toMatchObject({ parent: { sessionId: "4d5611e5-241a-462a-8d15-5122611a9569", agentId: "a2898e3" } });
    const p = await opened(root, parent);
    expect(p.entries.map(subagentOf).filter((l) => l !== null)).toEqual([
      { session: child.id, toolCallId: "toolu_017pLRuPHYTX5t99EnLyV53m" },
    ]);
    expect(callIds(p.entries)).toContain("toolu_017pLRuPHYTX5t99EnLyV53m");
    expect((await importForeign("claude-code", [dir], { root })).map((r) => r.status)).toEqual(["unchanged", "unchanged"]);
    expect(await collectRecords("claude-code", child.id, root)).toEqual(recordsOf(child.path));
    expect(await collectRecords("claude-code", parent.id, root)).toEqual(recordsOf(parent.path));
  });

  it("Claude Code, real files: the 2.0.64 agent file and the 2.1.39 compaction agent name their sessions", async () => {
    const root = tempDir("ts-subagent-");
    const cc = join(FIXTURES, "claude-code");
    // a main transcript is named after its session in ~/.claude/projects (the fixtures' names carry a version prefix)
    const tree = tempDir("ts-subagent-tree-");
    const imp = async (name: string, session: string) => {
      copyFileSync(join(cc, name), join(tree, `${session}.jsonl`));
      return (await importForeignFile("claude-code", join(tree, `${session}.jsonl`), { root })).id;
    };
    const main2064 = await imp("v2.0.64-4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl", "4c2ddfdc-b619-4525-8d03-1950fb1b0257");
    const main2139 = await imp("v2.1.39-trimmed-258c7280.jsonl", "258c7280-ae70-4798-800f-63464d01a85d");
    const agent = await importForeignFile("claude-code", join(cc, "v2.0.64-agent-50243ee8.jsonl"), { root });
    const compact = await importForeignFile("claude-code", join(cc, "v2.1.39-agent-acompact-fffbd0.jsonl"), { root });
    expect((await opened(root, agent)).header.parentSession).toBe(main2064);
    expect((await opened(root, compact)).header.parentSession).toBe(main2139);
    // a main session is nobody's subagent
    for (const name of ["v2.1.7-summaries.jsonl", "synthetic-v1.0.83-images.jsonl"]) {
      const r = await importForeignFile("claude-code", join(cc, name), { root });
      expect((await opened(root, r)).header.parentSession).toBeUndefined();
    }
  });

  it("Codex: a sub-agent rollout (session_meta.source.subagent.thread_spawn) and the parent's collab_agent_spawn_end", async () => {
    const root = tempDir("ts-subagent-");
    const parent = await importForeignFile("codex", CODEX_PARENT, { root });
    const child = await importForeignFile("codex", CODEX_CHILD, { root });
    expect(parent.id).toBe(derivedSessionId("codex", "spawn-test-uuid"));
    const c = await opened(root, child);
    expect(c.header.parentSession).toBe(parent.id);
    expect(c.header.foreign).toEqual({
      format: "codex",
      sessionId: "child-thread-uuid",
      parent: { sessionId: "spawn-test-uuid", depth: 1, agent_role: "explorer" },
    });
    expect(c.context.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);

    const p = await opened(root, parent);
    const spawning = p.entries.filter((e) => subagentOf(e) !== null);
    expect(spawning.map(subagentOf)).toEqual([{ session: child.id, toolCallId: "call_spawn1" }]);
    expect(callIds(p.entries)).toContain("call_spawn1");

    expect((await importForeignFile("codex", CODEX_CHILD, { root })).status).toBe("unchanged");
    expect((await importForeignFile("codex", CODEX_PARENT, { root })).status).toBe("unchanged");
    expect(await collectRecords("codex", child.id, root)).toEqual(recordsOf(CODEX_CHILD));
    expect(await collectRecords("codex", parent.id, root)).toEqual(recordsOf(CODEX_PARENT));
  });

  it("a subagent converted to the other agent is written as its subagent; re-imported, linked to the converted parent", async () => {
    const root = tempDir("ts-subagent-");
    const [parent, child] = (await importForeign("claude-code", [join(FIXTURES, "subagents/claude-code-real")], { root })).sort(
      (a, b) => a.path.length - b.path.length,
    ) as [ForeignImportReport, ForeignImportReport];
    const out = tempDir("ts-subagent-out-");
    const write = async (format: InterchangeFormat, id: string, name: string, from = root) => {
      const lines: Buffer[] = [];
      for await (const l of exportForeign(format, id, { root: from })) lines.push(foreignLineBytes(l));
      writeFileSync(join(out, name), Buffer.concat(lines));
      return join(out, name);
    };
    const childRollout = await write("codex", child.id, "child.jsonl");
    const meta = recordsOf(childRollout)[0];
    expect(meta.payload.id).toBe(child.id);
    expect(meta.payload.source).toEqual({ subagent: { thread_spawn: { parent_thread_id: parent.id, depth: 1 } } });
    const parentRollout = await write("codex", parent.id, "parent.jsonl");
    expect(recordsOf(parentRollout)[0].payload.id).toBe(parent.id);
    const again = tempDir("ts-subagent-");
    const p2 = await importForeignFile("codex", parentRollout, { root: again });
    const c2 = await importForeignFile("codex", childRollout, { root: again });
    expect((await opened(again, c2)).header.parentSession).toBe(p2.id);
    // the parent's side: the spawn's end event names the subagent's thread, so the Task call's link holds too
    const links2 = (await opened(again, p2)).entries.map(subagentOf).filter((l) => l !== null);
    expect(links2).toEqual([{ session: c2.id, toolCallId: "toolu_017pLRuPHYTX5t99EnLyV53m" }]);

    // and back the other way: the Codex subagent to Claude Code, sidechain records under the parent's sessionId
    const claudeChild = await write("claude-code", c2.id, "agent.jsonl", again);
    const records = recordsOf(claudeChild).filter((r) => r.type === "user" || r.type === "assistant");
    expect(records.length).toBeGreaterThan(0);
    for (const r of records)
      expect(r).toMatchObject({ isSidechain: true, sessionId: p2.id, agentId: expect.stringMatching(/^a[0-9a-f]{16}$/) });
    const claudeParent = await write("claude-code", p2.id, `${p2.id}.jsonl`, again);
    const third = tempDir("ts-subagent-");
    const p3 = await importForeignFile("claude-code", claudeParent, { root: third });
    const c3 = await importForeignFile("claude-code", claudeChild, { root: third });
    expect((await opened(third, c3)).header.parentSession).toBe(p3.id);
    // and the Task result names the subagent's agent id again (toolUseResult.agentId)
    const links3 = (await opened(third, p3)).entries.map(subagentOf).filter((l) => l !== null);
    expect(links3).toEqual([{ session: c3.id, toolCallId: "toolu_017pLRuPHYTX5t99EnLyV53m" }]);
    expect((await opened(third, p3)).header.parentSession).toBeUndefined();
  });
});
