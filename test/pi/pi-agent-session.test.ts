import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { fauxAssistantMessage, fauxText, fauxToolCall, registerFauxProvider, type FauxProviderRegistration } from "@mariozechner/pi-ai";
import * as pi from "@mariozechner/pi-coding-agent";
import * as facade from "../../src/pi/index.ts";
import { SessionManager as CoreSessionManager } from "../../src/session/session-manager.ts";
import { makePng } from "../support/png.ts";
import { linesOf, piHome } from "./helpers.ts";

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

let faux: FauxProviderRegistration;
let fetchCalls: unknown[];

beforeEach(() => {
  faux = registerFauxProvider({
    provider: "scripted",
    models: [
      { id: "scripted-a", input: ["text", "image"] },
      { id: "scripted-b", input: ["text", "image"] },
    ],
  });
  // Nothing in this test may reach the network: the scripted provider never calls fetch, and a stray call fails loudly.
  fetchCalls = [];
  vi.stubGlobal("fetch", (...args: unknown[]) => {
    fetchCalls.push(args);
    return Promise.reject(new Error("network is off in this test"));
  });
});

afterEach(() => {
  faux.unregister();
  vi.unstubAllGlobals();
  vi.unstubAllEnvs();
});

describe("a real pi AgentSession on the facade", () => {
  it("turns with tool calls, a user image, a model change, a branch and a compaction read back the same in pi and in ours", async () => {
    const h = piHome();
    // Whatever pi resolves by default stays in this test's dir, never ~/.pi.
    vi.stubEnv("PI_CODING_AGENT_DIR", h.agentDir);
    mkdirSync(h.cwd, { recursive: true });
    writeFileSync(join(h.cwd, "notes.txt"), "the answer is 42\n");
    const png = makePng(48, 40, 5);
    const dir = facade.getDefaultSessionDir(h.cwd, h.agentDir);

    const authStorage = pi.AuthStorage.inMemory();
    authStorage.setRuntimeApiKey("scripted", "not-a-real-key");
    const modelRegistry = pi.ModelRegistry.inMemory(authStorage);
    const settingsManager = pi.SettingsManager.inMemory({
      compaction: { enabled: false, keepRecentTokens: 1 },
      retry: { enabled: false },
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

    const ours = facade.SessionManager.create(h.cwd, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    const [modelA, modelB] = faux.models;
    // What the scripted model was shown, checked after each turn (a throw inside a response would become an error reply).
    const shown: any[] = [];
    const { session } = await pi.createAgentSession({
      cwd: h.cwd,
      agentDir: h.agentDir,
      authStorage,
      modelRegistry,
      settingsManager,
      resourceLoader,
      model: modelA,
      thinkingLevel: "off",
      tools: ["read", "write"],
      // pi's parameter is its own class; the facade has the same public surface.
      sessionManager: ours as unknown as pi.SessionManager,
    });

    // Turn 1: a real `read` tool call and its result.
    faux.setResponses([
      fauxAssistantMessage(fauxToolCall("read", { path: "notes.txt" }, { id: "call-read" }), { stopReason: "toolUse" }),
      (context) => {
        shown.push(context.messages.at(-1));
        return fauxAssistantMessage("The notes say 42.");
      },
    ]);
    await session.prompt("What do my notes say?");
    expect(shown[0]).toMatchObject({ role: "toolResult", toolCallId: "call-read", content: [{ text: "the answer is 42\n" }] });

    // Turn 2: a user image, which the model is shown.
    faux.setResponses([
      (context) => {
        shown.push(context.messages.at(-1));
        return fauxAssistantMessage("A small noisy picture.");
      },
    ]);
    await session.prompt("What is in this picture?", { images: [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }] });
    expect(shown[1].content).toContainEqual({ type: "image", data: png.toString("base64"), mimeType: "image/png" });

    // A model change, then Turn 3 on the new model: a real `write` tool call.
    await session.setModel(modelB!);
    faux.setResponses([
      fauxAssistantMessage(
        [fauxText("Writing it down."), fauxToolCall("write", { path: "out.txt", content: "42" }, { id: "call-write" })],
        {
          stopReason: "toolUse",
        },
      ),
      fauxAssistantMessage("Saved to out.txt."),
    ]);
    await session.prompt("Save the answer to out.txt.");
    expect(readFileSync(join(h.cwd, "out.txt"), "utf8")).toBe("42");

    // A branch: back to before turn 3, pi's scripted model summarizing the abandoned path, then another turn there.
    const turn3 = ours.getEntries().find((e: any) => e.type === "message" && lastUserText({ messages: [e.message] }).startsWith("Save"))!;
    faux.setResponses([fauxAssistantMessage("The user had the answer saved to out.txt.")]);
    const nav = await session.navigateTree(turn3.id, { summarize: true });
    expect(nav.cancelled).toBe(false);
    expect(nav.summaryEntry?.parentId).toBe(turn3.parentId);
    faux.setResponses([(context) => fauxAssistantMessage(`You asked: ${lastUserText(context)}`)]);
    await session.prompt("Instead, just tell me the answer.");

    // A compaction, its summary written by the scripted model, then one more turn on top of it. Keeping only the
    // last token splits the last turn, so pi asks for two summaries: the history's and the split turn's prefix.
    faux.setResponses([
      fauxAssistantMessage("Summary: notes say 42; an image was shown; the answer was given."),
      fauxAssistantMessage("Prefix: the user asked for the answer."),
    ]);
    const compaction = await session.compact();
    expect(compaction.summary).toContain("Summary: notes say 42");
    faux.setResponses([fauxAssistantMessage("Still 42.")]);
    await session.prompt("And now?");

    expect(faux.getPendingResponseCount()).toBe(0);
    expect(ours.getEntries().filter((e: any) => e.message?.stopReason === "error")).toEqual([]);
    expect(fetchCalls).toEqual([]);
    const file = session.sessionFile!;
    expect(file.startsWith(dir)).toBe(true);
    session.dispose();
    const expected = treeOf(ours.getEntries(), ours.getLeafId());
    ours.close();

    // Every kind of entry the scenario is about is in the tree.
    const kinds = expected.entries.map((e) => e.role ?? e.type);
    for (const kind of ["model_change", "thinking_level_change", "user", "assistant", "toolResult", "branch_summary", "compaction"]) {
      expect(kinds, kind).toContain(kind);
    }
    expect(expected.entries.filter((e) => e.type === "model_change").map((e) => e.model)).toEqual([
      "scripted/scripted-a",
      "scripted/scripted-b",
    ]);
    // Real tool calls and their results, paired by id.
    expect(expected.entries.filter((e) => e.role === "toolResult").map((e) => e.toolCallId)).toEqual(["call-read", "call-write"]);
    expect(expected.entries.flatMap((e) => e.texts).filter((t: string) => t.includes("#call-"))).toEqual([
      "read#call-read",
      "write#call-write",
    ]);
    const siblings = expected.entries.filter((e) => e.parentId === turn3.parentId).map((e) => e.type);
    expect(siblings.sort()).toEqual(["branch_summary", "message"]);

    // The image is a blob ref on disk, not inline.
    const imageLine = linesOf(file).find((l) => l.message?.content?.some?.((c: any) => c.type === "image"))!;
    expect(imageLine.message.content.find((c: any) => c.type === "image").data).toMatch(/^blob:sha256:[0-9a-f]{64}$/);

    // pi 0.73.1 reads the same tree.
    const theirs = pi.SessionManager.open(file, dir);
    expect(treeOf(theirs.getEntries(), theirs.getLeafId())).toEqual(expected);
    // pi sees the image as its ref (docs/pi.md: `transcript-store export` inlines it for pi).
    expect((theirs.getEntry(imageLine.id) as any).message.content).toContainEqual(imageLine.message.content[1]);

    // So does the main entry, and it gives the image back byte for byte.
    const core = await CoreSessionManager.open(file, { blobsDir: h.blobsDir, readOnly: true });
    expect(treeOf(core.getEntries(), core.getLeafId())).toEqual(expected);
    const image = (core.getEntry(imageLine.id)!.message as any).content as any[];
    expect(Buffer.from(image.find((c) => c.type === "image").data, "base64").equals(png)).toBe(true);
    await core.close();

    // And the facade itself, resuming the session, rebuilds the context pi rebuilds (summaries, kept messages, model).
    const resumed = facade.SessionManager.open(file, undefined, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    expect(treeOf(resumed.getEntries(), resumed.getLeafId())).toEqual(expected);
    const context = resumed.buildSessionContext();
    expect(contextOf(context)).toEqual(contextOf(theirs.buildSessionContext() as any));
    expect(context.messages.map((m) => m.role)).toEqual(["compactionSummary", "assistant", "user", "assistant"]);
    expect(context.model).toEqual({ provider: "scripted", modelId: "scripted-b" });
    resumed.close();
  });
});
