import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { OutputSink } from "../../src/artifacts/output-sink.ts";
import type { ArtifactPointer } from "../../src/artifacts/pointer.ts";
import { extractArtifactBlocks } from "../../src/artifacts/reveal.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";
import type { SnapshotKeys } from "./helpers/snapshot.ts";
import { runArtifactChild } from "./helpers/run-child.ts";
import { snapshot } from "./helpers/snapshot.ts";

async function childJson(args: string[]): Promise<Record<string, unknown>> {
  const result = await runArtifactChild(args);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

/** Fills a store with one of everything, then lets it go out of scope. */
function populate(dir: string, keysFile: string): { expected: unknown; pointer: string; bigRows: unknown; streamed: string } {
  const store = new ArtifactStore(dir, { now: () => 1_000 });
  store.save("alpha\nbeta\ngamma\ndelta\n", { toolType: "bash", name: "build", summary: "the build log", contentType: "text/x-log" });
  const bigRows = { rows: Array.from({ length: 4000 }, (_, i) => ({ i, v: `value ${i} ü` })) };
  const envelope = store.spill(bigRows, { toolType: "sql", name: "rows" }) as ArtifactPointer;
  store.save(Buffer.from([1, 2, 3, 250]), { toolType: "bin" });
  store.save("short lived\n", { toolType: "bash", ttlMs: 500 });
  const sink = new OutputSink({ artifacts: store, toolType: "bash", spillThreshold: 1024 });
  const streamed = Array.from({ length: 5000 }, (_, i) => `out ${i} ✓\n`).join("");
  for (let off = 0; off < streamed.length; off += 999) sink.push(streamed.slice(off, off + 999));
  const { artifactId } = sink.dump();
  const { text, refs } = extractArtifactBlocks(
    "intro\nARTIFACT\nSUMMARY: first\n~~~\nbody one\n~~~\nARTIFACT\nSUMMARY: second\nbody two\n",
    store,
  );
  const reviewer = store.allocateAgentOutputId("reviewer");
  store.saveAgentOutput(reviewer, JSON.stringify({ verdict: "ok", issues: [{ line: 3 }] }));
  store.saveAgentOutput(store.allocateAgentOutputId("reviewer"), "# Second review\nfine\n");
  store.saveAgentOutput(store.allocateAgentOutputId("fixer", { parentPrefix: reviewer }), "patched");
  const keys: SnapshotKeys = {
    ids: ["0", "1", "2", "3", artifactId!, ...refs.map((r) => r.id), "99"],
    names: ["build", "rows", "missing"],
    pointers: [envelope.pointer, "artifact://4"],
    agentUrls: [
      "agent://reviewer",
      "agent://reviewer/issues/0/line",
      "agent://reviewer?q=.verdict",
      "agent://reviewer-2",
      "agent://reviewer.fixer",
      "agent://nobody",
    ],
    text: `${text}see <artifact id="0" /> and <artifact id='99' />`,
  };
  writeFileSync(keysFile, JSON.stringify(keys));
  return { expected: JSON.parse(JSON.stringify(snapshot(store, keys))), pointer: envelope.pointer, bigRows, streamed };
}

describe("artifacts read back in a new process (acceptance 9)", () => {
  it("everything saved by a discarded store reads the same from a child process", async () => {
    const root = tempDir("ts-art-");
    const dir = join(root, "2026-01-01T00-00-00-000Z_session");
    const keysFile = join(root, "keys.json");
    const { expected, pointer, bigRows, streamed } = populate(dir, keysFile);

    const child = await childJson(["snapshot", dir, "1000", keysFile]);
    expect(child).toEqual(expected);
    // spot checks, so the comparison above cannot pass on two equally empty snapshots
    const list = child.list as Array<{ id: string; name?: string; toolType: string }>;
    expect(list.map((r) => r.id)).toEqual(["0", "1", "2", "3", "4", "5", "6"]);
    expect(list[0]).toMatchObject({
      name: "build",
      toolType: "bash",
      summary: "the build log",
      contentType: "text/x-log",
      createdAt: 1_000,
      file: "/0.bash.log",
    });
    expect((child.byName as unknown[])[1]).toEqual(bigRows);
    expect((child.byPointer as unknown[])[0]).toEqual(bigRows);
    expect(pointer).toBe("artifact://1");
    expect((child.byId as unknown[])[2]).toEqual({ hex: "010203fa" });
    expect((child.byId as unknown[])[4]).toBe(streamed);
    expect((child.byId as unknown[])[5]).toBe("body one");
    expect((child.byId as unknown[])[6]).toBe("body two");
    expect((child.pages as Array<{ content: string } | null>)[0]!.content).toBe("beta\ngamma\n");
    expect((child.agentUrls as Array<{ content?: string; error?: string }>).map((r) => r.content ?? r.error)).toEqual([
      '{"verdict":"ok","issues":[{"line":3}]}',
      "3",
      '"ok"',
      "# Second review\nfine\n",
      "patched",
      "ARTIFACT_NOT_FOUND",
    ]);
    expect(child.expanded).toBe("intro\nbody one\nbody two\nsee alpha\nbeta\ngamma\ndelta\n and <artifact id='99' />");

    // later clock in another process: the TTL still applies
    const later = await childJson(["snapshot", dir, "1500", keysFile]);
    expect((later.list as Array<{ id: string }>).map((r) => r.id)).toEqual(["0", "1", "2", "4", "5", "6"]);
    expect((later.byId as unknown[])[3]).toBeNull();

    // and a reopened store continues numbering after what is on disk
    expect(await childJson(["continue", dir])).toEqual({ next: "7", agent: "reviewer-3" });
  }, 60_000);

  it("a session's artifacts survive close and reopen through SessionManager in a new process", async () => {
    const root = tempDir("ts-art-");
    const m = await SessionManager.create(join(root, "proj"), { root });
    m.appendMessage({ role: "user", content: "hi" });
    const store = m.artifacts!;
    expect(store.dir).toBe(m.artifactsDir);
    store.save("the notes\n", { toolType: "notes", name: "notes" });
    store.saveAgentOutput(store.allocateAgentOutputId("worker"), '{"answer":42}');
    const path = m.sessionFile!;
    await m.close();
    expect(await childJson(["session-read", path, root])).toEqual({ artifact: "the notes\n", byName: "the notes\n", agent: "42" });
  }, 60_000);
});
