import assert from "node:assert/strict";
import { SessionManager } from "../session/session-manager.ts";
import { assistant, type ConformanceBackend, refOf, type Register, throwsWithCode, user } from "./harness.ts";
import { conformancePng as makePng } from "./png.ts";

/** The lifecycle behaviours: continue, forkFrom, the pipeline, context entries, agent outputs, gc grace, close, deferral. */
export function lifecycleBehaviours(test: Register, backend: ConformanceBackend): void {
  test("continueRecent reopens the newest session of a cwd, else creates one", async () => {
    const options = await backend.options();
    let t = Date.parse("2026-02-01T00:00:00Z");
    const clock = {
      ...options,
      now: () => {
        t += 1000;
        return new Date(t);
      },
    };
    const fresh = await SessionManager.continueRecent("/work/cr", clock);
    fresh.appendMessage(user("first"));
    await fresh.close();
    const newer = await SessionManager.create("/work/cr", clock);
    newer.appendMessage(user("second"));
    await newer.close();
    const again = await SessionManager.continueRecent("/work/cr", clock);
    assert.equal(again.sessionId, newer.sessionId);
    assert.equal(again.getEntries().length, 1);
    await again.close();
  });

  test("forkFrom copies a session another writer holds, without taking it", async () => {
    const options = await backend.options();
    const writer = await SessionManager.create("/work/ff", options);
    writer.appendMessage(user("held"));
    writer.appendMessage(assistant("yes"));
    await writer.flush();
    const fork = await SessionManager.forkFrom(refOf(writer), "/work/ff2", options);
    assert.deepEqual(
      fork.getEntries().map((e) => e.id),
      writer.getEntries().map((e) => e.id),
    );
    assert.equal(fork.cwd, "/work/ff2");
    writer.appendMessage(user("still mine"));
    await writer.close();
    await fork.close();
    const source = await SessionManager.open(refOf(writer), { ...options, readOnly: true });
    assert.equal(source.getEntries().length, 3);
    await source.close();
  });

  test("persists what the pipeline prepared: transient fields stripped, long strings cut, images whole", async () => {
    const options = await backend.options();
    const png = makePng(30, 30, 4);
    const m = await SessionManager.create("/work/p", { ...options, maxStringChars: 1000 });
    const id = m.appendMessage({
      role: "toolResult",
      content: [
        { type: "text", text: "y".repeat(5000) },
        { type: "image", data: png.toString("base64"), mimeType: "image/png" },
      ],
      partialJson: "transient",
      timestamp: 5,
    } as never);
    await m.close();
    const again = await SessionManager.open(refOf(m), { ...options, readOnly: true });
    const message = again.getEntry(id)!.message as Record<string, unknown> & { content: Array<{ text?: string; data?: string }> };
    assert.equal(message.partialJson, undefined);
    assert.ok(message.content[0]!.text!.length < 1200, `cut to ${message.content[0]!.text!.length} characters`);
    assert.equal(message.content[1]!.data, png.toString("base64"));
    await again.close();
  });

  test("keeps compactions, labels and branch summaries: the reopened context is the same", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/work/ctx", options);
    const u = m.appendMessage(user("a"));
    m.appendMessage(assistant("b"));
    const kept = m.appendMessage(user("c"));
    m.appendCompaction("summary of a, b", kept, 1234);
    m.appendLabelChange(u, "start");
    m.appendThinkingLevelChange("high");
    m.branchWithSummary(kept, "abandoned nothing");
    m.appendMessage(assistant("d"));
    const context = m.buildContext();
    await m.close();
    const again = await SessionManager.open(refOf(m), { ...options, readOnly: true });
    assert.deepEqual(again.buildContext(), context);
    assert.equal(again.getLeafId(), m.getLeafId());
    await again.close();
  });

  test("keeps artifacts and agent outputs across a reopen", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/work/ao", options);
    m.appendMessage(user("spawn"));
    const store = m.artifacts!;
    const id = store.allocateAgentOutputId("reviewer");
    store.saveAgentOutput(id, "# Review\n\nall good\n");
    const ref = store.save({ rows: [1, 2, 3] }, { toolType: "json" });
    await m.close();
    const again = await SessionManager.open(refOf(m), { ...options, readOnly: true });
    assert.equal(again.artifacts!.getAgentOutput(id), "# Review\n\nall good\n");
    assert.deepEqual(again.artifacts!.get(ref.id), { rows: [1, 2, 3] });
    assert.deepEqual(again.artifacts!.listAgentOutputs(), [id]);
    await again.close();
  });

  test("keeps agent outputs under the longest ids the API accepts across a close and reopen", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/work/long-ids", options);
    m.appendMessage(user("spawn"));
    const store = m.artifacts!;
    // An allocated stem of 200 characters (MAX_AGENT_OUTPUT_ID) and its `-2` sibling; a given id of 208.
    const prefix = "p".repeat(135);
    const first = store.allocateAgentOutputId("r".repeat(64), { parentPrefix: prefix });
    const second = store.allocateAgentOutputId("r".repeat(64), { parentPrefix: prefix });
    const given = `g.${"x".repeat(206)}`;
    assert.deepEqual([first.length, second.length, given.length], [200, 202, 208]);
    for (const id of [first, second, given]) store.saveAgentOutput(id, `# ${id.length}\n`);
    await m.close();
    const again = await SessionManager.open(refOf(m), { ...options, readOnly: true });
    assert.deepEqual(again.artifacts!.listAgentOutputs(), [given, first, second].sort());
    for (const id of [first, second, given]) assert.equal(again.artifacts!.getAgentOutput(id), `# ${id.length}\n`);
    await again.close();
  });

  test("gc keeps an unreferenced blob younger than the grace period", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/work/young", options);
    await m.close();
    const young = await m.blobs.put(makePng(10, 10, 8));
    assert.deepEqual((await SessionManager.gc({ ...options, graceMs: 3_600_000 })).deleted, []);
    assert.equal(await m.blobs.has(young.ref), true);
  });

  test("a closed session refuses appends", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/work/closed", options);
    await m.close();
    throwsWithCode(() => m.appendMessage(user("late")), "READ_ONLY");
  });

  test("deferred: an assistant message that cannot be serialized is refused and the kept-back entries wait for the next one", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/work/defer-fail", { ...options, deferUntilAssistant: true });
    const u = m.appendMessage(user("kept back"));
    const bad = { role: "assistant", content: [{ type: "text", text: "x" }], usage: { big: 1n }, timestamp: 2 };
    throwsWithCode(() => m.appendMessage(bad as never), "PERSISTENCE_FAILED");
    assert.deepEqual(
      m.getEntries().map((e) => e.id),
      [u],
    );
    const a = m.appendMessage(assistant("fine"));
    await m.close();
    const [info] = await SessionManager.list("/work/defer-fail", options);
    const again = await SessionManager.open(info!.path, { ...options, readOnly: true });
    assert.deepEqual(
      again.getEntries().map((e) => e.id),
      [u, a],
    );
    assert.equal(again.getEntry(a)!.parentId, u);
    await again.close();
  });
}
