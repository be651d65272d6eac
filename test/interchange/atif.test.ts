import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ATIF_SCHEMA_VERSION } from "../../src/interchange/atif.ts";
import { validateAtif } from "../../src/interchange/atif-validate.ts";
import { exportSession, type ExportSessionOptions } from "../../src/interchange/export-session.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";
import { HOSTILE, viewsSession } from "./views-session.ts";

async function exported(ref: string, options: ExportSessionOptions): Promise<string> {
  let out = "";
  for await (const chunk of exportSession(ref, options)) out += chunk;
  return out;
}

describe("exportSession --to atif", () => {
  it("maps the active branch to ATIF steps that pass the RFC's rules", async () => {
    const s = await viewsSession();
    const doc = JSON.parse(await exported(s.m.sessionFile!, { root: s.root, format: "atif" }));
    expect(validateAtif(doc)).toEqual([]);
    expect(doc.schema_version).toBe(ATIF_SCHEMA_VERSION);
    expect(doc.session_id).toBe(s.m.sessionId);
    expect(doc.agent).toEqual({ name: "transcript-store", version: "unknown", model_name: "claude-test-1" });
    expect(doc.steps.map((x: any) => [x.step_id, x.source, x.extra.entry_id])).toEqual([
      [1, "user", s.ids.u1],
      [2, "agent", s.ids.a1],
      [3, "agent", s.ids.a2],
      [4, "system", expect.any(String)],
      [5, "user", expect.any(String)],
      [6, "user", expect.any(String)],
    ]);
    const [user, call, answer, compaction] = doc.steps;
    expect(user.message).toBe(`Please look. ${HOSTILE.script} ${HOSTILE.img}`);
    expect(user.timestamp).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(call.model_name).toBe("claude-test-1");
    expect(call.message).toBe("Reading it now.");
    expect(call.reasoning_content).toBe(`I should read the file. ${HOSTILE.separators}`);
    expect(call.tool_calls).toEqual([
      { tool_call_id: "call_1", function_name: "read", arguments: { path: "/tmp/a.png", note: HOSTILE.script } },
    ]);
    // ATIF's prompt tokens count all input, cached or not; cached tokens are the cache reads.
    expect(call.metrics).toMatchObject({ prompt_tokens: 160, completion_tokens: 20, cached_tokens: 50, cost_usd: 0.25 });
    const [result] = call.observation.results;
    expect(result.source_call_id).toBe("call_1");
    expect(result.extra).toMatchObject({ entry_id: s.ids.r1, tool_name: "read" });
    expect(result.content[0]).toEqual({ type: "text", text: `file read ${HOSTILE.fence}` });
    // The image, stored as a blob, is back as its bytes in a data: URL.
    expect(result.content[1]).toEqual({ type: "image", source: { media_type: "image/png", path: `data:image/png;base64,${s.png}` } });
    expect(answer.message).toBe("Active branch answer.");
    expect(compaction.message).toBe("Summary of the work so far.");
    expect(compaction.extra).toMatchObject({ role: "compaction", first_kept_entry_id: s.ids.a2, tokens_before: 1234 });
    expect(doc.final_metrics).toEqual({
      total_prompt_tokens: 360,
      total_completion_tokens: 50,
      total_cached_tokens: 50,
      total_cost_usd: 0.75,
      total_steps: 6,
    });
    // What is not a step is counted, not dropped silently.
    expect(doc.extra.transcript_store.unmapped_entries).toEqual({ model_change: 1, label: 1 });
    expect(JSON.stringify(doc)).not.toContain("Other branch");
  });

  it("--branch exports the branch ending at that entry", async () => {
    const s = await viewsSession();
    const doc = JSON.parse(await exported(s.m.sessionFile!, { root: s.root, format: "atif", branch: s.ids.otherLeaf }));
    expect(validateAtif(doc)).toEqual([]);
    expect(doc.steps.map((x: any) => x.message).slice(-2)).toEqual(["Other branch question.", "Other branch answer."]);
    expect(JSON.stringify(doc)).not.toContain("Active branch");
  });

  it("an unknown --branch entry is ENTRY_NOT_FOUND before anything is produced", async () => {
    const s = await viewsSession();
    const chunks = exportSession(s.m.sessionFile!, { root: s.root, format: "atif", branch: "nope1234" });
    await expect(chunks.next()).rejects.toMatchObject({ code: "ENTRY_NOT_FOUND" });
  });
});

describe("validateAtif", () => {
  const valid = () => ({
    schema_version: "ATIF-v1.8",
    session_id: "s",
    agent: { name: "a", version: "1" },
    steps: [
      { step_id: 1, source: "user", message: "hi" },
      {
        step_id: 2,
        source: "agent",
        message: "",
        tool_calls: [{ tool_call_id: "c1", function_name: "f", arguments: {} }],
        observation: { results: [{ source_call_id: "c1", content: "ok" }] },
      },
    ],
  });

  it("accepts a minimal valid document", () => {
    expect(validateAtif(valid())).toEqual([]);
  });

  it("accepts what the RFC allows and our exporter never writes (test/fixtures/atif/features.json)", () => {
    const doc = JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/atif/features.json"), "utf8"));
    expect(validateAtif(doc)).toEqual([]);
    // The same document with its subagent's id repeated, and one without: both refused.
    const twice = structuredClone(doc);
    twice.subagent_trajectories.push(structuredClone(doc.subagent_trajectories[0]));
    expect(validateAtif(twice).map((p) => p.path)).toEqual(["$.subagent_trajectories[1].trajectory_id"]);
    delete doc.subagent_trajectories[0].trajectory_id;
    expect(validateAtif(doc).map((p) => p.path)).toEqual(["$.subagent_trajectories[0].trajectory_id"]);
  });

  it.each([
    ["a step id out of sequence", (d: any) => (d.steps[1].step_id = 3), "$.steps[1].step_id"],
    ["an agent-only field on a user step", (d: any) => (d.steps[0].model_name = "m"), "$.steps[0].model_name"],
    ["a field the RFC does not define", (d: any) => (d.steps[0].role = "user"), "$.steps[0].role"],
    [
      "a result naming no call of its step",
      (d: any) => (d.steps[1].observation.results[0].source_call_id = "c2"),
      "$.steps[1].observation.results[0].source_call_id",
    ],
    [
      "an image type the RFC does not list",
      (d: any) => (d.steps[0].message = [{ type: "image", source: { media_type: "image/bmp", path: "a.bmp" } }]),
      "$.steps[0].message[0].source.media_type",
    ],
    ["no agent version", (d: any) => delete d.agent.version, "$.agent.version"],
    ["an unknown schema version", (d: any) => (d.schema_version = "ATIF-v9"), "$.schema_version"],
    ["no steps", (d: any) => (d.steps = []), "$.steps"],
    ["arguments that are not an object", (d: any) => (d.steps[1].tool_calls[0].arguments = "x"), "$.steps[1].tool_calls[0].arguments"],
    ["a timestamp that is not ISO 8601", (d: any) => (d.steps[0].timestamp = "yesterday"), "$.steps[0].timestamp"],
    ["metrics on a no-LLM agent step", (d: any) => Object.assign(d.steps[1], { llm_call_count: 0, metrics: {} }), "$.steps[1].metrics"],
  ])("reports %s", (_what, spoil, path) => {
    const doc = valid();
    spoil(doc);
    expect(validateAtif(doc).map((p) => p.path)).toContain(path);
  });
});

describe("exportSession --to atif, edge cases", () => {
  it("an empty session is one system step saying so (ATIF requires a step)", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "p"), { root });
    m.appendCustomEntry("state", { a: 1 });
    await m.close();
    const doc = JSON.parse(await exported(m.sessionFile!, { root, format: "atif" }));
    expect(validateAtif(doc)).toEqual([]);
    expect(doc.steps).toEqual([{ step_id: 1, source: "system", message: "", extra: { empty_branch: true } }]);
    expect(doc.extra.transcript_store.unmapped_entries).toEqual({ custom: 1 });
  });

  it("a tool result whose call is not in the step before it is a system step with its observation", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "p"), { root });
    m.appendMessage({ role: "user", content: "go" });
    const r = m.appendMessage({ role: "toolResult", toolCallId: "lost", toolName: "bash", content: "out", isError: true });
    await m.close();
    const doc = JSON.parse(await exported(m.sessionFile!, { root, format: "atif" }));
    expect(validateAtif(doc)).toEqual([]);
    expect(doc.steps[1]).toMatchObject({
      step_id: 2,
      source: "system",
      message: "",
      observation: {
        results: [{ source_call_id: null, content: "out", extra: { unmatched_call_id: "lost", is_error: true, entry_id: r } }],
      },
    });
  });

  it("an id no session has is SESSION_NOT_FOUND", async () => {
    const root = tempDir();
    await expect(exported("no-such-session", { root, format: "atif" })).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
  });
});
