import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { resolveInternalUrl } from "../../src/artifacts/internal-urls.ts";
import { TranscriptStoreError } from "../../src/errors.ts";
import { tempDir } from "../support/temp-dir.ts";
import { runArtifactChild } from "./helpers/run-child.ts";

function errorOf(fn: () => unknown): TranscriptStoreError {
  try {
    fn();
  } catch (err) {
    if (err instanceof TranscriptStoreError) return err;
    throw err;
  }
  throw new Error("expected a TranscriptStoreError");
}

function sessionIn(root: string, name = "session") {
  return { artifacts: new ArtifactStore(join(root, name)) };
}

describe("resolveInternalUrl messages and codes (acceptance 3)", () => {
  it("no session", () => {
    for (const session of [null, undefined, { artifacts: null }]) {
      for (const url of ["artifact://0", "agent://x"]) {
        const err = errorOf(() => resolveInternalUrl(url, { session }));
        expect(err.code).toBe("NO_SESSION");
        expect(err.message).toBe("No session - artifacts unavailable");
      }
    }
  });

  it("non-numeric artifact id", () => {
    const err = errorOf(() => resolveInternalUrl("artifact://abc", { session: sessionIn(tempDir("ts-art-")) }));
    expect(err.code).toBe("INVALID_ARTIFACT_ID");
    expect(err.message).toBe("artifact:// ID must be numeric, got: abc");
  });

  it("artifact not found lists the available ids, or none", () => {
    const session = sessionIn(tempDir("ts-art-"));
    let err = errorOf(() => resolveInternalUrl("artifact://3", { session }));
    expect(err.code).toBe("ARTIFACT_NOT_FOUND");
    expect(err.message).toBe("Artifact 3 not found. Available: none");
    session.artifacts.save("a", { toolType: "bash" });
    session.artifacts.save("b", { toolType: "bash" });
    err = errorOf(() => resolveInternalUrl("artifact://3", { session }));
    expect(err.code).toBe("ARTIFACT_NOT_FOUND");
    expect(err.message).toBe("Artifact 3 not found. Available: 0, 1");
  });

  it("agent output not found lists the available outputs", () => {
    const session = sessionIn(tempDir("ts-art-"));
    session.artifacts.saveAgentOutput("planner", "# plan");
    const err = errorOf(() => resolveInternalUrl("agent://reviewer", { session }));
    expect(err.code).toBe("ARTIFACT_NOT_FOUND");
    expect(err.message).toBe("Agent output reviewer not found. Available: planner");
  });

  it("path extraction combined with ?q=", () => {
    const session = sessionIn(tempDir("ts-art-"));
    session.artifacts.saveAgentOutput("a", '{"x":1}');
    const err = errorOf(() => resolveInternalUrl("agent://a/x?q=.x", { session }));
    expect(err.code).toBe("INVALID_QUERY");
    expect(err.message).toBe("agent:// URL cannot combine path extraction with ?q=");
  });

  it("extraction from an output that is not JSON", () => {
    const session = sessionIn(tempDir("ts-art-"));
    session.artifacts.saveAgentOutput("notes", "# just markdown");
    for (const url of ["agent://notes/x", "agent://notes?q=.x"]) {
      const err = errorOf(() => resolveInternalUrl(url, { session }));
      expect(err.code).toBe("INVALID_QUERY");
      expect(err.message).toMatch(/^Output notes is not valid JSON: .+/);
    }
  });

  it("bad queries and pagination with extraction are refused with codes", () => {
    const session = sessionIn(tempDir("ts-art-"));
    session.artifacts.saveAgentOutput("a", '{"x":"s"}');
    expect(errorOf(() => resolveInternalUrl("agent://a?q=.x[", { session })).code).toBe("INVALID_QUERY");
    expect(errorOf(() => resolveInternalUrl("agent://a?q=", { session })).code).toBe("INVALID_QUERY");
    expect(errorOf(() => resolveInternalUrl("agent://a?q=.x.y", { session })).code).toBe("INVALID_QUERY");
    expect(errorOf(() => resolveInternalUrl("agent://a/x", { session, offset: 2 })).code).toBe("INVALID_OPTION");
    expect(errorOf(() => resolveInternalUrl("artifact://0", { session, offset: 0 })).code).toBe("INVALID_OPTION");
  });
});

describe("resolveInternalUrl reads", () => {
  it("artifact:// returns the text with its content type and line pages", () => {
    const session = sessionIn(tempDir("ts-art-"));
    session.artifacts.save("one\ntwo\nthree\n", { toolType: "bash" });
    session.artifacts.save({ k: [1, 2] }, { toolType: "json" });
    expect(resolveInternalUrl("artifact://0", { session })).toEqual({
      url: "artifact://0",
      scheme: "artifact",
      id: "0",
      content: "one\ntwo\nthree\n",
      contentType: "text/plain",
      page: { offset: 1, lineCount: 3, totalLines: 3, hasMore: false },
    });
    expect(resolveInternalUrl("artifact://0", { session, offset: 2, limit: 1 })).toMatchObject({
      content: "two\n",
      page: { offset: 2, lineCount: 1, totalLines: 3, hasMore: true },
    });
    expect(resolveInternalUrl("artifact://1", { session })).toMatchObject({ content: '{"k":[1,2]}', contentType: "application/json" });
  });

  it("agent:// returns markdown, a JSON path, or a ?q= query", () => {
    const session = sessionIn(tempDir("ts-art-"));
    const store = session.artifacts;
    const id = store.allocateAgentOutputId("finder");
    const doc = {
      files: [
        { name: "a.ts", lines: 10 },
        { name: "b/c.ts", lines: 20 },
      ],
      "odd key": { "x.y": true },
    };
    store.saveAgentOutput(id, JSON.stringify(doc));
    expect(resolveInternalUrl("agent://finder", { session })).toMatchObject({
      scheme: "agent",
      id: "finder",
      content: JSON.stringify(doc),
      contentType: "text/markdown",
    });
    const value = (url: string) => JSON.parse(resolveInternalUrl(url, { session }).content) as unknown;
    expect(value("agent://finder/files/1/name")).toBe("b/c.ts");
    expect(value("agent://finder/odd%20key/x.y")).toBe(true);
    expect(value("agent://finder?q=.files[0].lines")).toBe(10);
    expect(value("agent://finder?q=files.1")).toEqual({ name: "b/c.ts", lines: 20 });
    expect(value(`agent://finder?q=${encodeURIComponent('["odd key"]["x.y"]')}`)).toBe(true);
    expect(value("agent://finder?q=.")).toEqual(doc);
    expect(value("agent://finder/files/9")).toBeNull();
    expect(value("agent://finder?q=.__proto__")).toBeNull();
    expect(resolveInternalUrl("agent://finder/files", { session }).contentType).toBe("application/json");
  });

  it("?q= is decoded as a URI component: `+` stays a plus, never a space (item 10)", () => {
    const session = sessionIn(tempDir("ts-art-"));
    session.artifacts.saveAgentOutput("calc", JSON.stringify({ "a+b": "plus", "a b": "space", "c&d": "amp" }));
    const value = (url: string) => JSON.parse(resolveInternalUrl(url, { session }).content) as unknown;
    expect(value('agent://calc?q=["a+b"]')).toBe("plus");
    expect(value("agent://calc?q=.a+b")).toBe("plus");
    expect(value("agent://calc?q=.a%2Bb")).toBe("plus");
    expect(value("agent://calc?q=.a%20b")).toBe("space");
    expect(value(`agent://calc?q=${encodeURIComponent('["c&d"]')}`)).toBe("amp");
    expect(value('agent://calc?x=1&q=["a+b"]')).toBe("plus");
    expect(errorOf(() => resolveInternalUrl("agent://calc?q=.%E0%A4%A", { session })).code).toBe("INVALID_QUERY");
  });

  it("nested agent ids (parent prefixes) resolve", () => {
    const session = sessionIn(tempDir("ts-art-"));
    const parent = session.artifacts.allocateAgentOutputId("Planner");
    const child = session.artifacts.allocateAgentOutputId("Worker", { parentPrefix: parent });
    expect(child).toBe("Planner.Worker");
    session.artifacts.saveAgentOutput(child, '{"ok":true}');
    expect(resolveInternalUrl("agent://Planner.Worker/ok", { session }).content).toBe("true");
  });
});

describe("sessions are isolated (acceptance 4)", () => {
  it("a session cannot read another session's artifact through artifact://N, even one written by another process", async () => {
    const root = tempDir("ts-art-");
    const mine = sessionIn(root, "mine");
    const theirs = join(root, "theirs");
    const child = await runArtifactChild(["save-one", theirs, "their secret"]);
    expect(child.stderr).toBe("");
    expect(child.stdout.trim()).toBe("0");
    expect(resolveInternalUrl("artifact://0", { session: { artifacts: new ArtifactStore(theirs) } }).content).toBe("their secret");
    const err = errorOf(() => resolveInternalUrl("artifact://0", { session: mine }));
    expect(err.code).toBe("ARTIFACT_NOT_FOUND");
    expect(err.message).toBe("Artifact 0 not found. Available: none");
    mine.artifacts.save("my own", { toolType: "bash" });
    expect(resolveInternalUrl("artifact://0", { session: mine }).content).toBe("my own");
    expect(mine.artifacts.get("artifact://0")).toBe("my own");
  });
});
