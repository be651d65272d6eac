import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, expect, it, vi } from "vitest";
import { SessionManager as AgentSessionManager } from "../../src/pi/agent.ts";
import * as facade from "../../src/pi/index.ts";
import { SessionManager as CoreSessionManager } from "../../src/session/session-manager.ts";
import { makePng } from "../support/png.ts";
import { linesOf, piHome } from "./helpers.ts";
import { describePi15, loadPi, loadPiAi } from "./pi15.ts";

type Pi = Awaited<ReturnType<typeof loadPi>>;
type PiAi = Awaited<ReturnType<typeof loadPiAi>>;
let pi: Pi;
let ai: PiAi;

/** What every reader must agree on for one entry: its place in the tree and what it says. */
function shape(entry: any) {
  const message = entry.message;
  const content = message?.content;
  const texts =
    typeof content === "string" ? [content] : (content ?? []).map((c: any) => c.text ?? (c.name ? `${c.name}#${c.id}` : c.type));
  return {
    id: entry.id,
    parentId: entry.parentId,
    type: entry.type,
    role: message?.role,
    toolCallId: message?.toolCallId,
    texts,
    summary: entry.summary,
    model: entry.type === "model_change" ? `${entry.provider}/${entry.modelId}` : undefined,
    firstKept: entry.firstKeptEntryId,
    target: entry.targetId,
    replacement: entry.type === "context_edit" ? entry.replacement : undefined,
    kind: entry.kind,
    tools: message?.role === "system" ? (message.toolsAdded ?? []).map((t: any) => t.name) : undefined,
    systemMessage: entry.systemMessage ? (entry.systemMessage.toolsAdded ?? []).map((t: any) => t.name) : undefined,
  };
}

/** The whole tree as one reader sees it. */
function treeOf(entries: any[], leaf: string | null) {
  return { entries: entries.map(shape), leaf };
}

/** What the model is shown when the session is resumed. */
function contextOf(context: { messages: any[]; model: unknown; thinkingLevel: string }) {
  return { messages: context.messages.map((m) => shape({ message: m })), model: context.model, thinkingLevel: context.thinkingLevel };
}

/** The text of the last user message a scripted model is shown. */
function lastUserText(context: { messages: any[] }): string {
  const user = [...context.messages].reverse().find((m) => m.role === "user");
  const content = user?.content;
  if (typeof content === "string") return content;
  return (content ?? []).map((c: any) => c.text ?? "").join("");
}

let fetchCalls: unknown[];

describePi15("pi-agent-session.test.ts")("a real pi 1.5.2 AgentSession on the facade", () => {
  beforeAll(async () => {
    pi = await loadPi();
    ai = await loadPiAi();
  });

  beforeEach(() => {
    // Nothing in this test may reach the network: the scripted provider never calls fetch, and a stray call fails loudly.
    fetchCalls = [];
    vi.stubGlobal("fetch", (...args: unknown[]) => {
      fetchCalls.push(args);
      return Promise.reject(new Error("network is off in this test"));
    });
  });

  afterEach(() => {
    vi.unstubAllGlobals();
    vi.unstubAllEnvs();
  });

  it("tool calls, an image, a model change, a retried error, a branch, a compaction, usage: both readers agree on the file", async () => {
    const h = piHome();
    // Whatever pi resolves by default stays in this test's dir, never ~/.pi.
    vi.stubEnv("PI_CODING_AGENT_DIR", h.agentDir);
    mkdirSync(h.cwd, { recursive: true });
    writeFileSync(join(h.cwd, "notes.txt"), "the answer is 42\n");
    const png = makePng(48, 40, 5);
    const dir = facade.getDefaultSessionDir(h.cwd, h.agentDir);

    const faux = ai.fauxProvider({
      provider: "scripted",
      models: [
        { id: "scripted-a", input: ["text", "image"] },
        { id: "scripted-b", input: ["text", "image"] },
      ],
    });
    const modelRuntime = await pi.ModelRuntime.create({
      credentials: new ai.InMemoryCredentialStore(),
      modelsPath: null,
      allowModelNetwork: false,
      refreshOnCreate: false,
    });
    modelRuntime.registerNativeProvider(faux.provider);
    await modelRuntime.setRuntimeApiKey("scripted", "not-a-real-key");
    const settingsManager = pi.SettingsManager.inMemory({
      compaction: { enabled: false, keepRecentTokens: 1 },
      retry: { enabled: true, maxRetries: 1, baseDelayMs: 1 },
    });
    const resourceLoader = new pi.DefaultResourceLoader({
      cwd: h.cwd,
      agentDir: h.agentDir,
      settingsManager,
      noExtensions: true,
      noSkills: true,
      noPromptTemplates: true,
      noThemes: true,
      noContextFiles: true,
      systemPrompt: "You are a scripted test agent.",
    });
    await resourceLoader.reload();

    // transcript-store/pi/agent: the facade, typed as pi's class (no cast at this call site).
    const ours = AgentSessionManager.create(h.cwd, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    const [modelA, modelB] = faux.models;
    // What the scripted model was shown, checked after each turn (a throw inside a response would become an error reply).
    const shown: any[] = [];
    const { session } = await pi.createAgentSession({
      cwd: h.cwd,
      agentDir: h.agentDir,
      modelRuntime,
      settingsManager,
      resourceLoader,
      model: modelA,
      thinkingLevel: "off",
      tools: ["read", "write"],
      sessionManager: ours,
    });

    // Turn 1: a real `read` tool call and its result; the model is shown the persisted system prompt and tools.
    faux.setResponses([
      (context) => {
        shown.push(context.messages[0]);
        return ai.fauxAssistantMessage(ai.fauxToolCall("read", { path: "notes.txt" }, { id: "call-read" }), { stopReason: "toolUse" });
      },
      (context) => {
        shown.push(context.messages.at(-1));
        return ai.fauxAssistantMessage("The notes say 42.");
      },
    ]);
    await session.prompt("What do my notes say?");
    expect(shown[0]).toMatchObject({ role: "system" });
    expect(
      ai
        .getCurrentTools([shown[0]])
        .map((t) => t.name)
        .sort(),
    ).toEqual(["read", "write"]);
    expect(shown[1]).toMatchObject({ role: "toolResult", toolCallId: "call-read", content: [{ text: "the answer is 42\n" }] });

    // Turn 2: a user image, which the model is shown; the first attempt fails with a retryable error, which pi
    // leaves out of the model's context with a context edit before retrying.
    faux.setResponses([
      ai.fauxAssistantMessage("", { stopReason: "error", errorMessage: "503 overloaded" }),
      (context) => {
        shown.push(context.messages.at(-1));
        shown.push(context.messages.filter((m) => m.role === "assistant").length);
        return ai.fauxAssistantMessage("A small noisy picture.");
      },
    ]);
    await session.prompt("What is in this picture?", { images: [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }] });
    expect(shown[2].content).toContainEqual({ type: "image", data: png.toString("base64"), mimeType: "image/png" });
    expect(shown[3]).toBe(2); // the failed attempt is not shown: two answers so far
    const edits = ours.getEntries().filter((e) => e.type === "context_edit");
    expect(edits).toHaveLength(1);
    expect(edits[0]).toMatchObject({ replacement: null });

    // A usage entry, as pi's cache warmer records one.
    const usage = {
      input: 100,
      output: 1,
      cacheRead: 90,
      cacheWrite: 0,
      totalTokens: 101,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    };
    const usageEntry = session.sessionManager.appendUsage("cache_warm", "scripted", "scripted-a", usage);

    // A model change, then Turn 3 on the new model: a real `write` tool call.
    await session.setModel(modelB!);
    faux.setResponses([
      ai.fauxAssistantMessage(
        [ai.fauxText("Writing it down."), ai.fauxToolCall("write", { path: "out.txt", content: "42" }, { id: "call-write" })],
        {
          stopReason: "toolUse",
        },
      ),
      ai.fauxAssistantMessage("Saved to out.txt."),
    ]);
    await session.prompt("Save the answer to out.txt.");
    expect(readFileSync(join(h.cwd, "out.txt"), "utf8")).toBe("42");

    // A branch: back to before turn 3, pi's scripted model summarizing the abandoned path, then another turn there.
    const turn3 = ours.getEntries().find((e: any) => e.type === "message" && lastUserText({ messages: [e.message] }).startsWith("Save"))!;
    faux.setResponses([ai.fauxAssistantMessage("The user had the answer saved to out.txt.")]);
    const nav = await session.navigateTree(turn3.id, { summarize: true });
    expect(nav.cancelled).toBe(false);
    faux.setResponses([(context) => ai.fauxAssistantMessage(`You asked: ${lastUserText(context)}`)]);
    await session.prompt("Instead, just tell me the answer.");

    // A compaction, its summary written by the scripted model, then one more turn on top of it.
    faux.setResponses([
      ai.fauxAssistantMessage("Summary: notes say 42; an image was shown; the answer was given."),
      ai.fauxAssistantMessage("Prefix: the user asked for the answer."),
    ]);
    const compaction = await session.compact();
    expect(compaction.summary).toContain("Summary: notes say 42");
    faux.setResponses([
      (context) => {
        shown.push(context.messages.map((m) => m.role));
        return ai.fauxAssistantMessage("Still 42.");
      },
    ]);
    await session.prompt("And now?");
    // After the compaction the model is shown the compaction's system message (prompt and tools) first.
    expect(shown.at(-1)[0]).toBe("system");

    expect(faux.getPendingResponseCount()).toBe(0);
    expect(fetchCalls).toEqual([]);
    const file = session.sessionFile!;
    expect(file.startsWith(dir)).toBe(true);
    session.dispose();
    const expected = treeOf(ours.getEntries(), ours.getLeafId());
    const expectedContext = contextOf(ours.buildSessionContext());
    ours.close();

    // Every kind of entry the scenario is about is in the tree.
    const kinds = expected.entries.map((e) => e.role ?? e.type);
    for (const kind of [
      "system",
      "model_change",
      "thinking_level_change",
      "user",
      "assistant",
      "toolResult",
      "usage",
      "context_edit",
      "branch_summary",
      "compaction",
    ]) {
      expect(kinds, kind).toContain(kind);
    }
    expect(expected.entries.find((e) => e.id === usageEntry.id)).toMatchObject({ type: "usage", kind: "cache_warm" });
    expect(expected.entries.find((e) => e.type === "compaction")!.systemMessage!.sort()).toEqual(["read", "write"]);
    expect(expected.entries.filter((e) => e.type === "model_change").map((e) => e.model)).toEqual([
      "scripted/scripted-a",
      "scripted/scripted-b",
    ]);
    // Real tool calls and their results, paired by id.
    expect(expected.entries.filter((e) => e.role === "toolResult").map((e) => e.toolCallId)).toEqual(["call-read", "call-write"]);
    const siblings = expected.entries.filter((e) => e.parentId === turn3.parentId).map((e) => e.type);
    expect(siblings.sort()).toEqual(["branch_summary", "message"]);

    // The image is a blob ref on disk, not inline.
    const imageLine = linesOf(file).find((l) => l.message?.content?.some?.((c: any) => c.type === "image"))!;
    expect(imageLine.message.content.find((c: any) => c.type === "image").data).toMatch(/^blob:sha256:[0-9a-f]{64}$/);

    // pi 1.5.2 reads the same tree and rebuilds the same context.
    const theirs = pi.SessionManager.open(file, dir);
    expect(treeOf(theirs.getEntries(), theirs.getLeafId())).toEqual(expected);
    expect(contextOf(theirs.buildSessionContext() as any)).toEqual(expectedContext);
    // pi sees the image as its ref (docs/pi.md: `transcript-store export`/`inline-images` inline it for pi).
    expect((theirs.getEntry(imageLine.id) as any).message.content).toContainEqual(imageLine.message.content[1]);

    // So does the main entry, and it gives the image back byte for byte.
    const core = await CoreSessionManager.open(file, { blobsDir: h.blobsDir, readOnly: true });
    expect(treeOf(core.getEntries(), core.getLeafId())).toEqual(expected);
    const image = (core.getEntry(imageLine.id)!.message as any).content as any[];
    expect(Buffer.from(image.find((c) => c.type === "image").data, "base64").equals(png)).toBe(true);
    await core.close();

    // And the facade itself, resuming the session, rebuilds the context pi rebuilds.
    const resumed = facade.SessionManager.open(file, undefined, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    expect(treeOf(resumed.getEntries(), resumed.getLeafId())).toEqual(expected);
    expect(contextOf(resumed.buildSessionContext())).toEqual(contextOf(theirs.buildSessionContext() as any));
    expect(resumed.buildSessionContext().model).toEqual({ provider: "scripted", modelId: "scripted-b" });
    resumed.close();
  });
});
