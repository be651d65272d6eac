import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { importForeignFile } from "../../src/interchange/import-foreign.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { linesOf } from "../pi/helpers.ts";
import { describePi15, loadPi, loadPiAi } from "../pi/pi15.ts";
import { AgentMock } from "../support/agent-mock.ts";
import { agentBinary, agentsAvailable, claudeEnv, codexEnv, inOrder, jsonlFiles, runAgent } from "../support/real-agents.ts";
import { tempDir } from "../support/temp-dir.ts";

// pi 1.6.0's own SessionManager and AgentSession resume a session file of the store, its model an
// Anthropic one whose base URL is the mock on 127.0.0.1.
type Pi = Awaited<ReturnType<typeof loadPi>>;
type PiAi = Awaited<ReturnType<typeof loadPiAi>>;
let pi: Pi;
let ai: PiAi;
let mock: AgentMock | null = null;

afterEach(async () => {
  await mock?.close();
  mock = null;
});

/** pi's own session manager on `file`, an AgentSession on it whose model is served by the mock; sends `prompt`. */
async function piResume(file: string, cwd: string, prompt: string): Promise<void> {
  const agentDir = join(tempDir("ts-pi-agent-"), "agent");
  mkdirSync(agentDir, { recursive: true });
  const modelRuntime = await pi.ModelRuntime.create({
    credentials: new ai.InMemoryCredentialStore(),
    modelsPath: null,
    allowModelNetwork: false,
    refreshOnCreate: false,
  });
  await modelRuntime.setRuntimeApiKey("anthropic", "sk-ant-test-dummy");
  const settingsManager = pi.SettingsManager.inMemory({ compaction: { enabled: false }, retry: { enabled: false } });
  const resourceLoader = new pi.DefaultResourceLoader({
    cwd,
    agentDir,
    settingsManager,
    noExtensions: true,
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
    systemPrompt: "You are a test agent.",
  });
  await resourceLoader.reload();
  const model = {
    id: "claude-sonnet-4-5",
    name: "mock",
    api: "anthropic-messages",
    provider: "anthropic",
    baseUrl: mock!.url,
    reasoning: false,
    input: ["text", "image"],
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 200000,
    maxTokens: 8192,
  };
  const { session } = await pi.createAgentSession({
    cwd,
    agentDir,
    modelRuntime,
    settingsManager,
    resourceLoader,
    model: model as never,
    thinkingLevel: "off",
    tools: [],
    sessionManager: pi.SessionManager.open(file),
  });
  await session.prompt(prompt);
}

/** The store's own reading of the file after pi wrote to it: every line an entry, none malformed. */
async function ourView(file: string, root: string) {
  const m = await SessionManager.open(file, { root, readOnly: true });
  try {
    return { entries: m.getEntries(), malformed: m.loadReport.malformed.length, context: JSON.stringify(m.buildContext().messages) };
  } finally {
    await m.close();
  }
}

describePi15("real-pi.test.ts")("pi 1.6.0 resumes sessions of the store", () => {
  beforeAll(async () => {
    pi = await loadPi();
    ai = await loadPiAi();
  });

  it("a native session: pi sends our history to the model and appends its turn, which the store reads", async () => {
    mock = await AgentMock.start(["MARK-PI-REPLY"]);
    const root = tempDir();
    const cwd = tempDir();
    const m = await SessionManager.create(cwd, { root });
    m.appendMessage({ role: "user", content: "MARK-U1 hello", timestamp: Date.now() });
    m.appendMessage({
      role: "assistant",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: "MARK-A1 hi" }],
      api: "anthropic-messages",
      // as pi writes every assistant message (its AgentSession reads `usage.totalTokens` of the last one)
      usage: {
        input: 10,
        output: 2,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 12,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: "stop",
      timestamp: Date.now(),
    } as never);
    const file = m.sessionFile!;
    await m.close();
    const before = linesOf(file).length;
    await piResume(file, cwd, "MARK-U2 next");
    const call = mock.modelCalls().find((r) => JSON.stringify(r.body?.messages ?? "").includes("MARK-U2"));
    expect(call).toBeDefined();
    expect(inOrder(JSON.stringify(call!.body.messages), ["MARK-U1", "MARK-A1", "MARK-U2"])).toBe(true);
    expect(linesOf(file).length).toBeGreaterThan(before);
    const view = await ourView(file, root);
    expect(view.malformed).toBe(0);
    expect(inOrder(view.context, ["MARK-U1", "MARK-A1", "MARK-U2", "MARK-PI-REPLY"])).toBe(true);
  });

  describe.skipIf(!agentsAvailable("real-pi.test.ts", ["claude", "codex"]))("from another agent", () => {
    // KNOWN DEFECT (docs/interchange.md, Proven against the real programs): the Codex mapper writes assistant
    // messages without `usage`, and pi's AgentSession reads `usage.totalTokens` of the last one: the turn ends in
    // an error before any model call. `it.fails` until the mapping carries usage (which changes the lines a
    // re-import of an existing Codex import compares: IMPORT_CONFLICT, so it needs a mapping version first).
    it.fails("a session the real Codex wrote, imported: pi sends its turns and appends its own", async () => {
      mock = await AgentMock.start(["MARK-CX-REPLY", "MARK-PI-REPLY"]);
      const cwd = tempDir();
      const codexHome = tempDir();
      await runAgent(
        agentBinary("codex")!,
        ["exec", "--skip-git-repo-check", "MARK-CX-PROMPT hello"],
        cwd,
        codexEnv(tempDir(), codexHome, mock.url),
      );
      const [rollout] = jsonlFiles(join(codexHome, "sessions"));
      const root = tempDir();
      const report = await importForeignFile("codex", rollout!, { root });
      const file = report.location!;
      await piResume(file, cwd, "MARK-U2 next");
      const call = mock.modelCalls().find((r) => JSON.stringify(r.body?.messages ?? "").includes("MARK-U2"));
      expect(call).toBeDefined();
      expect(inOrder(JSON.stringify(call!.body.messages), ["MARK-CX-PROMPT hello", "MARK-CX-REPLY", "MARK-U2"])).toBe(true);
      const view = await ourView(file, root);
      expect(view.malformed).toBe(0);
      expect(inOrder(view.context, ["MARK-CX-PROMPT", "MARK-CX-REPLY", "MARK-U2", "MARK-PI-REPLY"])).toBe(true);
    });

    it("a session the real Claude Code wrote, imported: pi sends its turns and appends its own", async () => {
      mock = await AgentMock.start(["MARK-CC-REPLY", "MARK-PI-REPLY"]);
      const cwd = tempDir();
      const home = tempDir();
      await runAgent(agentBinary("claude")!, ["-p", "MARK-CC-PROMPT hello", "--output-format", "json"], cwd, claudeEnv(home, mock.url));
      const [transcript] = jsonlFiles(join(home, ".claude", "projects"));
      const root = tempDir();
      const report = await importForeignFile("claude-code", transcript!, { root });
      const file = report.location!;
      await piResume(file, cwd, "MARK-U2 next");
      const call = mock.modelCalls().find((r) => JSON.stringify(r.body?.messages ?? "").includes("MARK-U2"));
      expect(call).toBeDefined();
      expect(inOrder(JSON.stringify(call!.body.messages), ["MARK-CC-PROMPT hello", "MARK-CC-REPLY", "MARK-U2"])).toBe(true);
      const view = await ourView(file, root);
      expect(view.malformed).toBe(0);
      expect(inOrder(view.context, ["MARK-CC-PROMPT", "MARK-CC-REPLY", "MARK-U2", "MARK-PI-REPLY"])).toBe(true);
    });
  });
});
