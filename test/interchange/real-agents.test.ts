import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { importForeignFile } from "../../src/interchange/import-foreign.ts";
import type { InterchangeFormat } from "../../src/interchange/foreign-entry.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { AgentMock } from "../support/agent-mock.ts";
import { cli } from "../support/cli.ts";
import { agentBinary, agentsAvailable, claudeEnv, codexEnv, inOrder, jsonlFiles, runAgent } from "../support/real-agents.ts";
import { tempDir } from "../support/temp-dir.ts";

// Claude Code 2.1.332 and Codex 0.171.0, run for real against a mock model server on 127.0.0.1.
const RUN = agentsAvailable("real-agents.test.ts", ["claude", "codex"]);

let mock: AgentMock | null = null;
afterEach(async () => {
  await mock?.close();
  mock = null;
});

const linesOf = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));

/** A native session with a prompt, a tool call and its result, and an answer; every text marked. */
async function nativeSession(root: string, cwd: string): Promise<{ id: string; marks: string[] }> {
  const m = await SessionManager.create(cwd, { root });
  const t = Date.parse("2026-07-01T08:00:00Z");
  m.appendMessage({ role: "user", content: "MARK-U1 please list the files", timestamp: t });
  m.appendMessage({
    role: "assistant",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    content: [
      { type: "text", text: "MARK-A1 listing" },
      { type: "toolCall", id: "toolu_01mark", name: "Bash", arguments: { command: "echo MARK-TOOL" } },
    ],
    stopReason: "toolUse",
    timestamp: t + 1000,
  } as never);
  m.appendMessage({
    role: "toolResult",
    toolCallId: "toolu_01mark",
    toolName: "Bash",
    content: [{ type: "text", text: "MARK-RESULT" }],
    isError: false,
    timestamp: t + 2000,
  });
  m.appendMessage({
    role: "assistant",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    content: [{ type: "text", text: "MARK-A2 done" }],
    stopReason: "stop",
    timestamp: t + 3000,
  } as never);
  const id = m.sessionId;
  await m.close();
  return { id, marks: ["MARK-U1", "MARK-A1", "MARK-TOOL", "MARK-RESULT", "MARK-A2"] };
}

/** `export <id> --to <format> --install --no-redact` with `env`: the file the agent will resume. */
async function install(root: string, id: string, format: InterchangeFormat, env: NodeJS.ProcessEnv, extra: string[] = []) {
  const out = await cli(["export", id, "--to", format, "--install", "--no-redact", "--root", root, ...extra], { env });
  expect(out.stderr).not.toMatch(/EXPORT_INCOMPLETE/);
  expect(out.code).toBe(0);
  return out.stdout.trim();
}

/**
 * The agent's file imported before and after it resumed: created, then appended with every line
 * (every record accounted for, nothing damaged, no problem).
 */
async function importBeforeAndAfter(format: InterchangeFormat, file: string, resume: () => Promise<void>) {
  const root = tempDir();
  const before = await importForeignFile(format, file, { root });
  expect(before.status).toBe("created");
  const linesBefore = linesOf(file).length;
  await resume();
  const after = await importForeignFile(format, file, { root });
  expect(after.status).toBe("appended");
  expect(after.id).toBe(before.id);
  expect(after.counts.records).toBe(linesOf(file).length);
  expect(after.counts.records).toBeGreaterThan(linesBefore);
  expect(after.counts.damaged).toBe(0);
  expect(after.problems.map((p) => `${p.code}: ${p.reason}`)).toEqual([]);
  return after;
}

/** Claude Code: `claude -p --resume <id> <prompt>` in `cwd`; the mock's model call that carried `prompt`. */
async function claudeResume(cwd: string, home: string, id: string, prompt: string) {
  const out = await runAgent(
    agentBinary("claude")!,
    ["-p", "--resume", id, prompt, "--output-format", "json"],
    cwd,
    claudeEnv(home, mock!.url),
  );
  expect(JSON.parse(out.stdout)).toMatchObject({ is_error: false, session_id: id });
  return mock!.modelCalls().find((r) => JSON.stringify(r.body?.messages ?? "").includes(prompt));
}

/** Codex: `codex exec resume <id> <prompt>` in `cwd`; the mock's model call that carried `prompt`. */
async function codexResume(cwd: string, env: NodeJS.ProcessEnv, id: string, prompt: string) {
  await runAgent(agentBinary("codex")!, ["exec", "--skip-git-repo-check", "resume", id, prompt], cwd, env);
  return mock!.modelCalls().find((r) => JSON.stringify(r.body?.input ?? "").includes(prompt));
}

/** A session the real Codex writes from scratch in `cwd`: its rollout file. */
async function codexScratch(cwd: string, prompt: string): Promise<string> {
  const codexHome = tempDir();
  await runAgent(agentBinary("codex")!, ["exec", "--skip-git-repo-check", prompt], cwd, codexEnv(tempDir(), codexHome, mock!.url));
  const files = jsonlFiles(join(codexHome, "sessions"));
  expect(files).toHaveLength(1);
  return files[0]!;
}

/** A session the real Claude Code writes from scratch in `cwd`: its transcript file. */
async function claudeScratch(cwd: string, prompt: string): Promise<string> {
  const home = tempDir();
  await runAgent(agentBinary("claude")!, ["-p", prompt, "--output-format", "json"], cwd, claudeEnv(home, mock!.url));
  const files = jsonlFiles(join(home, ".claude", "projects"));
  expect(files).toHaveLength(1);
  return files[0]!;
}

/** The imported file exported back (`--no-redact`) equals the file, record for record. */
async function exportsBackEqual(format: InterchangeFormat, file: string) {
  const root = tempDir();
  const report = await importForeignFile(format, file, { root });
  expect(report.status).toBe("created");
  expect(report.counts.damaged).toBe(0);
  expect(report.problems).toEqual([]);
  // its one model call (the mock answers 100 input and 7 output tokens) is in `usage`, priced from the table
  const usage = await cli(["usage", "--root", root, "--json"]);
  const total = usage.records.find((r) => r.type === "total")!;
  expect(total).toMatchObject({ calls: 1, unpricedCalls: 0 });
  expect(total.tokens.input + total.tokens.cacheRead).toBe(100);
  expect(total.tokens.output).toBe(7);
  expect(total.cost.total).toBeGreaterThan(0);
  const out = await cli(["export", report.id, "--to", format, "--no-redact", "--root", root]);
  expect(out.code).toBe(0);
  expect(
    out.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
  ).toEqual(linesOf(file));
}

/** Imports the agent's own file into `root` and continues it here (a prompt and an answer, marked): the session id. */
async function importAndContinue(format: InterchangeFormat, file: string, root: string): Promise<string> {
  const report = await importForeignFile(format, file, { root });
  const m = await SessionManager.open(report.location!, { root });
  m.appendMessage({ role: "user", content: "MARK-HERE-U continued in the store", timestamp: Date.now() });
  m.appendMessage({
    role: "assistant",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    content: [{ type: "text", text: "MARK-HERE-A answered in the store" }],
    stopReason: "stop",
    timestamp: Date.now() + 1,
  } as never);
  await m.close();
  return report.id;
}

describe.skipIf(!RUN)("Claude Code 2.1.332 resumes what we export", () => {
  it("a native session: the model is sent our history in order; the turn Claude appends re-imports as appended", async () => {
    mock = await AgentMock.start(["MARK-REPLY from the mock"]);
    const root = tempDir();
    const cwd = tempDir();
    const home = tempDir();
    const s = await nativeSession(root, cwd);
    const file = await install(root, s.id, "claude-code", { HOME: home });
    expect(file).toBe(join(home, ".claude", "projects", cwd.replace(/[^A-Za-z0-9]/g, "-"), `${s.id}.jsonl`));
    await importBeforeAndAfter("claude-code", file, async () => {
      const call = await claudeResume(cwd, home, s.id, "MARK-U2 next");
      expect(call).toBeDefined();
      expect(inOrder(JSON.stringify(call!.body.messages), [...s.marks, "MARK-U2"])).toBe(true);
    });
    expect(readFileSync(file, "utf8")).toContain("MARK-REPLY from the mock");
  });

  it("a session the real Codex wrote, converted: Claude Code sends its turns and appends its own", async () => {
    mock = await AgentMock.start(["MARK-CX-REPLY", "MARK-REPLY from the mock"]);
    const cwd = tempDir();
    const rollout = await codexScratch(cwd, "MARK-CX-PROMPT hello");
    const root = tempDir();
    const imported = await importForeignFile("codex", rollout, { root });
    const home = tempDir();
    const file = await install(root, imported.id, "claude-code", { HOME: home });
    await importBeforeAndAfter("claude-code", file, async () => {
      const call = await claudeResume(cwd, home, imported.id, "MARK-U2 next");
      expect(call).toBeDefined();
      expect(inOrder(JSON.stringify(call!.body.messages), ["MARK-CX-PROMPT hello", "MARK-CX-REPLY", "MARK-U2"])).toBe(true);
    });
  });

  it("its own session, imported, continued here and exported back: Claude Code sends every turn, ours included", async () => {
    mock = await AgentMock.start(["MARK-CC-REPLY", "MARK-REPLY from the mock"]);
    const cwd = tempDir();
    const transcript = await claudeScratch(cwd, "MARK-CC-PROMPT hello");
    const sourceId = linesOf(transcript).find((r) => typeof r.sessionId === "string").sessionId as string;
    const root = tempDir();
    const id = await importAndContinue("claude-code", transcript, root);
    const home = tempDir();
    const file = await install(root, id, "claude-code", { HOME: home });
    expect(file.endsWith(`${sourceId}.jsonl`)).toBe(true);
    await importBeforeAndAfter("claude-code", file, async () => {
      const call = await claudeResume(cwd, home, sourceId, "MARK-U2 next");
      expect(call).toBeDefined();
      const marks = ["MARK-CC-PROMPT hello", "MARK-CC-REPLY", "MARK-HERE-U", "MARK-HERE-A", "MARK-U2"];
      expect(inOrder(JSON.stringify(call!.body.messages), marks)).toBe(true);
    });
  });

  it("a session Claude Code wrote from scratch imports whole and exports back equal", async () => {
    mock = await AgentMock.start(["MARK-REPLY from the mock"]);
    const file = await claudeScratch(tempDir(), "MARK-CC-PROMPT hello");
    await exportsBackEqual("claude-code", file);
  });
});

describe.skipIf(!RUN)("Codex 0.171.0 resumes what we export", () => {
  it("a native session, on a provider of the user's (--codex-provider): the model is sent our history; re-import appended", async () => {
    mock = await AgentMock.start(["MARK-REPLY from the mock"]);
    const root = tempDir();
    const cwd = tempDir();
    const codexHome = tempDir();
    const env = codexEnv(tempDir(), codexHome, mock.url, "mockprov");
    const s = await nativeSession(root, cwd);
    const file = await install(root, s.id, "codex", { CODEX_HOME: codexHome }, ["--codex-provider", "mockprov"]);
    await importBeforeAndAfter("codex", file, async () => {
      const call = await codexResume(cwd, env, s.id, "MARK-U2 next");
      expect(call).toBeDefined();
      expect(inOrder(JSON.stringify(call!.body.input), [...s.marks, "MARK-U2"])).toBe(true);
    });
    expect(jsonlFiles(join(codexHome, "sessions"))).toEqual([file]);
    expect(readFileSync(file, "utf8")).toContain("MARK-REPLY from the mock");
  });

  it("a session the real Claude Code wrote, converted: Codex sends its turns and appends its own", async () => {
    mock = await AgentMock.start(["MARK-CC-REPLY", "MARK-REPLY from the mock"]);
    const cwd = tempDir();
    const transcript = await claudeScratch(cwd, "MARK-CC-PROMPT hello");
    const root = tempDir();
    const imported = await importForeignFile("claude-code", transcript, { root });
    const codexHome = tempDir();
    const env = codexEnv(tempDir(), codexHome, mock.url);
    const file = await install(root, imported.id, "codex", { CODEX_HOME: codexHome });
    await importBeforeAndAfter("codex", file, async () => {
      const call = await codexResume(cwd, env, imported.id, "MARK-U2 next");
      expect(call).toBeDefined();
      expect(inOrder(JSON.stringify(call!.body.input), ["MARK-CC-PROMPT hello", "MARK-CC-REPLY", "MARK-U2"])).toBe(true);
    });
  });

  it("its own session, imported, continued here and exported back: Codex sends every turn, ours included", async () => {
    mock = await AgentMock.start(["MARK-CX-REPLY", "MARK-REPLY from the mock"]);
    const cwd = tempDir();
    const rollout = await codexScratch(cwd, "MARK-CX-PROMPT hello");
    const sourceId = linesOf(rollout).find((r) => r.type === "session_meta").payload.id as string;
    const root = tempDir();
    const id = await importAndContinue("codex", rollout, root);
    const codexHome = tempDir();
    const env = codexEnv(tempDir(), codexHome, mock.url);
    const file = await install(root, id, "codex", { CODEX_HOME: codexHome });
    expect(file.endsWith(`${sourceId}.jsonl`)).toBe(true);
    await importBeforeAndAfter("codex", file, async () => {
      const call = await codexResume(cwd, env, sourceId, "MARK-U2 next");
      expect(call).toBeDefined();
      const marks = ["MARK-CX-PROMPT hello", "MARK-CX-REPLY", "MARK-HERE-U", "MARK-HERE-A", "MARK-U2"];
      expect(inOrder(JSON.stringify(call!.body.input), marks)).toBe(true);
    });
  });

  it("a session Codex wrote from scratch imports whole and exports back equal", async () => {
    mock = await AgentMock.start(["MARK-REPLY from the mock"]);
    const file = await codexScratch(tempDir(), "MARK-CX-PROMPT hello");
    await exportsBackEqual("codex", file);
  });
});
