import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/index.ts";
import { exportForeign, foreignLineBytes, type ForeignExportLine } from "../../src/interchange/export-foreign.ts";
import { importForeignFile } from "../../src/interchange/import-foreign.ts";
import { artifactsDirOf } from "../../src/session/paths.ts";
import { tempDir } from "../support/temp-dir.ts";

const SID = "9a8b7c6d-0000-4000-8000-0000000000aa";
const base = { isSidechain: false, userType: "external", cwd: "/home/demo/p", sessionId: SID, version: "2.1.0" };
const user = (uuid: string, parentUuid: string | null, text: string) => ({
  parentUuid,
  ...base,
  type: "user",
  message: { role: "user", content: text },
  uuid,
  timestamp: "2026-01-01T00:00:00.000Z",
});
const assistant = (uuid: string, parentUuid: string, text: string) => ({
  parentUuid,
  ...base,
  type: "assistant",
  message: {
    id: `msg_${uuid}`,
    role: "assistant",
    model: "claude-x",
    content: [{ type: "text", text }],
    usage: { input_tokens: 1, output_tokens: 2 },
  },
  uuid,
  timestamp: "2026-01-01T00:00:01.000Z",
});

/** A Claude Code transcript with one line of every kind of damage, and its exact bytes. */
function damagedFile(dir: string): { path: string; bytes: Buffer } {
  const parts = [
    Buffer.from(`${JSON.stringify(user("u1", null, "first"))}\n`),
    Buffer.from('{"type":"assistant","uuid":"broken", "message": {\n'),
    Buffer.concat([Buffer.from('{"type":"user","text":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]),
    Buffer.from("\n"),
    Buffer.from(`${JSON.stringify({ type: "brand-new-kind", uuid: "x1", parentUuid: "u1", sessionId: SID })}\n`),
    Buffer.from(`${JSON.stringify(assistant("a1", "u1", "answer"))}\n`),
    Buffer.from('{"parentUuid":"a1","type":"user","mess'),
  ];
  const bytes = Buffer.concat(parts);
  const path = join(dir, `${SID}.jsonl`);
  writeFileSync(path, bytes);
  return { path, bytes };
}

async function collect(lines: AsyncGenerator<ForeignExportLine, unknown>): Promise<ForeignExportLine[]> {
  const out: ForeignExportLine[] = [];
  for await (const l of lines) out.push(l);
  return out;
}

describe("damaged foreign input", () => {
  it("every damaged line is reported with its code, kept, and exported back byte for byte", async () => {
    const dir = tempDir("ts-foreign-src-");
    const root = tempDir("ts-foreign-");
    const { path, bytes } = damagedFile(dir);
    const report = await importForeignFile("claude-code", path, { root });
    expect(report.status).toBe("created");
    expect(report.counts).toEqual({ records: 7, mapped: 2, kept: 1, damaged: 4 });
    expect(report.problems.map((p) => [p.line, p.code])).toEqual([
      [2, "BAD_JSON"],
      [3, "INVALID_UTF8"],
      [4, "EMPTY_LINE"],
      [5, "UNKNOWN_RECORD_TYPE"],
      [7, "TORN_LINE"],
    ]);
    // kept in the session file itself: the torn text is there, the invalid bytes as base64
    const stored = readFileSync(report.location!, "utf8");
    expect(stored).toContain(JSON.stringify('{"parentUuid":"a1","type":"user","mess'));
    const invalid = Buffer.concat([Buffer.from('{"type":"user","text":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    expect(stored).toContain(JSON.stringify(invalid.toString("base64")));

    const exported = await collect(exportForeign("claude-code", report.id, { root }));
    expect(Buffer.concat(exported.map(foreignLineBytes)).equals(bytes)).toBe(true);

    // the context is the conversation: damaged and kept lines are not sent to the model
    const m = await SessionManager.open(report.location!, { root, readOnly: true });
    expect(m.buildContext().messages.map((msg) => [msg.role, msg.content])).toEqual([
      ["user", "first"],
      ["assistant", [{ type: "text", text: "answer" }]],
    ]);
    await m.close();

    expect((await importForeignFile("claude-code", path, { root })).status).toBe("unchanged");
  });

  it("a transcript that grew since its import is appended: the earlier entries stay as they were", async () => {
    const dir = tempDir("ts-foreign-src-");
    const root = tempDir("ts-foreign-");
    const path = join(dir, `${SID}.jsonl`);
    const first = [user("u1", null, "first"), assistant("a1", "u1", "answer")];
    writeFileSync(path, first.map((r) => `${JSON.stringify(r)}\n`).join(""));
    const before = await importForeignFile("claude-code", path, { root });
    const beforeBytes = readFileSync(before.location!, "utf8");
    writeFileSync(path, [...first, user("u2", "a1", "second")].map((r) => `${JSON.stringify(r)}\n`).join(""));
    const after = await importForeignFile("claude-code", path, { root });
    expect(after.status).toBe("appended");
    expect(after.id).toBe(before.id);
    expect(readFileSync(after.location!, "utf8").startsWith(beforeBytes)).toBe(true);
  });

  it("a file of the other agent is refused with BAD_HEADER, nothing written; --dry-run writes nothing", async () => {
    const root = tempDir("ts-foreign-");
    const dir = tempDir("ts-foreign-src-");
    const path = join(dir, `${SID}.jsonl`);
    writeFileSync(path, `${JSON.stringify(user("u1", null, "first"))}\n`);
    const refused = await importForeignFile("codex", path, { root });
    expect(refused.status).toBe("refused");
    expect(refused.error?.code).toBe("BAD_HEADER");
    const dry = await importForeignFile("claude-code", path, { root, dryRun: true });
    expect(dry.status).toBe("dry-run");
    expect(dry.counts.mapped).toBe(1);
    expect(existsSync(join(root, "sessions")) ? readdirSync(join(root, "sessions")) : []).toEqual([]);
  });
});

describe("long strings", () => {
  it("a tool output over the store's string limit, a transient key: the message the model sees is cut, the record is whole", async () => {
    const dir = tempDir("ts-foreign-src-");
    const root = tempDir("ts-foreign-");
    const big = "x".repeat(600_000);
    const result = {
      parentUuid: "a1",
      ...base,
      type: "user",
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: big }] },
      toolUseResult: { stdout: big, stderr: "", partialJson: '{"a":', jsonlEvents: [1] },
      uuid: "u2",
      timestamp: "2026-01-01T00:00:02.000Z",
    };
    const records = [user("u1", null, "go"), result];
    const path = join(dir, `${SID}.jsonl`);
    writeFileSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
    const report = await importForeignFile("claude-code", path, { root });
    const m = await SessionManager.open(report.location!, { root, readOnly: true });
    const seen = m.buildContext().messages[1]!.content as Array<{ text: string }>;
    expect(seen[0]!.text.length).toBe(500_000);
    expect(seen[0]!.text.endsWith("[Session persistence truncated large content]")).toBe(true);
    await m.close();
    const exported = await collect(exportForeign("claude-code", report.id, { root }));
    expect(exported.map((l) => ("record" in l ? l.record : null))).toEqual(records);
  });
});

describe("Claude Code's tool-results sidecar", () => {
  it("the files beside the transcript are carried into the session's artifacts directory, byte for byte", async () => {
    const dir = tempDir("ts-foreign-src-");
    const root = tempDir("ts-foreign-");
    const path = join(dir, `${SID}.jsonl`);
    writeFileSync(path, `${JSON.stringify(user("u1", null, "go"))}\n`);
    mkdirSync(join(dir, SID, "tool-results"), { recursive: true });
    const bytes = Buffer.from([0, 1, 2, 255, 10]);
    writeFileSync(join(dir, SID, "tool-results", "toolu_9.txt"), bytes);
    const report = await importForeignFile("claude-code", path, { root });
    expect(report.artifacts).toBe(1);
    expect(readFileSync(join(artifactsDirOf(report.location!), "tool-results", "toolu_9.txt")).equals(bytes)).toBe(true);
  });
});

describe("session ids", () => {
  it("two files of one Claude Code session (a subagent file without agentId) are two sessions; each re-imports unchanged", async () => {
    const dir = tempDir("ts-foreign-src-");
    const root = tempDir("ts-foreign-");
    const main = join(dir, `${SID}.jsonl`);
    const agent = join(dir, "agent-1234abcd.jsonl");
    writeFileSync(main, `${JSON.stringify(user("u1", null, "main"))}\n`);
    writeFileSync(agent, `${JSON.stringify({ ...user("s1", null, "side"), isSidechain: true })}\n`);
    const a = await importForeignFile("claude-code", main, { root });
    const b = await importForeignFile("claude-code", agent, { root });
    expect([a.status, b.status]).toEqual(["created", "created"]);
    expect(a.id).not.toBe(b.id);
    expect(b.sourceId).toBe(`${SID}:agent-1234abcd`);
    expect((await importForeignFile("claude-code", agent, { root })).status).toBe("unchanged");
  });
});
