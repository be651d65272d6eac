import { expect, it } from "vitest";
import { SessionManager, type SessionManagerOptions } from "../../src/index.ts";
import { openSessionIndex, type SessionIndex } from "../../src/search/session-index.ts";
import { expectCode } from "../support/error-code.ts";
import { describeBackends } from "./backends.ts";

/** A clock the sessions are written under: each call a second later, from `start`. */
function clock(start: string): () => Date {
  let t = Date.parse(start);
  return () => {
    t += 1000;
    return new Date(t);
  };
}

/** Two sessions written through the SessionManager (either backend); the entry ids each append returned. */
async function write(options: SessionManagerOptions) {
  const a = await SessionManager.create("/work/a", { ...options, now: clock("2026-01-02T10:00:00.000Z") });
  const ids = {
    u1: a.appendMessage({ role: "user", content: "Please refactor the parser module", timestamp: 1 }),
    a1: a.appendMessage({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "consider a streaming tokenizer" },
        { type: "text", text: "The parser now streams its input" },
      ],
      model: "claude-sonnet-4-5",
      timestamp: 2,
    }),
    t1: a.appendMessage({ role: "toolResult", toolCallId: "c", toolName: "bash", content: [{ type: "text", text: "parserless build" }] }),
    u2: "",
    a2: "",
  };
  await a.flush();
  const b = await SessionManager.create("/work/b", { ...options, now: clock("2026-03-01T09:00:00.000Z") });
  ids.u2 = b.appendMessage({ role: "user", content: "why does the parser crash on empty input", timestamp: 3 });
  ids.a2 = b.appendMessage({
    role: "assistant",
    content: [{ type: "text", text: "Empty input crashes the lexer, not the parser" }],
    model: "gpt-5.1-codex",
    timestamp: 4,
  });
  await b.flush();
  return { a, b, ids };
}

describeBackends("SessionIndex conformance", { needs: ["index"] }, (backend) => {
  const search = async (index: SessionIndex, query: string, options?: Parameters<SessionIndex["search"]>[1]) =>
    (await index.search(query, options)).map((h) => h.entryId).sort();

  it("finds words, phrases and prefixes across sessions; hits name the entry the append returned", async () => {
    const options = await backend.options();
    const { a, b, ids } = await write(options);
    const index = await openSessionIndex(options);
    try {
      expect(await search(index, "parser")).toEqual([ids.a1, ids.a2, ids.u1, ids.u2].sort());
      expect(await search(index, '"empty input"')).toEqual([ids.a2, ids.u2].sort());
      expect(await search(index, "parserl*")).toEqual([ids.t1]);
      expect(await search(index, "tokenizer")).toEqual([ids.a1]);
      const [hit] = await index.search("lexer");
      expect(hit).toMatchObject({ sessionId: b.sessionId, entryId: ids.a2, role: "assistant", cwd: "/work/b" });
      expect(hit!.snippet).toContain("«lexer»");
      expect((await index.search("tokenizer"))[0]).toMatchObject({ sessionId: a.sessionId, role: "thinking" });
      await expectCode(index.search('"unclosed'), "INVALID_QUERY");
    } finally {
      await index.close();
      await a.close();
      await b.close();
    }
  });

  it("filters by cwd, time, role, model and session", async () => {
    const options = await backend.options();
    const { a, b, ids } = await write(options);
    const index = await openSessionIndex(options);
    try {
      expect(await search(index, "parser", { cwd: "/work/a" })).toEqual([ids.a1, ids.u1].sort());
      expect(await search(index, "parser", { since: new Date("2026-02-01T00:00:00Z") })).toEqual([ids.a2, ids.u2].sort());
      expect(await search(index, "parser", { until: new Date("2026-02-01T00:00:00Z") })).toEqual([ids.a1, ids.u1].sort());
      expect(await search(index, "parser", { roles: ["user"] })).toEqual([ids.u1, ids.u2].sort());
      expect(await search(index, "parser", { model: "codex" })).toEqual([ids.a2]);
      expect(await search(index, "parser", { session: b.sessionId.slice(0, 8) })).toEqual([ids.a2, ids.u2].sort());
      expect(await search(index, "parser", { limit: 1 })).toHaveLength(1);
    } finally {
      await index.close();
      await a.close();
      await b.close();
    }
  });

  it("catches up with appends before answering, says when it is behind, and rebuilds to the same answers", async () => {
    const options = await backend.options();
    const { a, b, ids } = await write(options);
    const index = await openSessionIndex(options);
    try {
      await index.refresh();
      expect(await index.status()).toMatchObject({ fresh: true, sessionsIndexed: 2 });
      const late = a.appendMessage({ role: "user", content: "a late zebra question", timestamp: 5 });
      await a.flush();
      expect((await index.status()).fresh).toBe(false);
      expect(await search(index, "zebra")).toEqual([late]);
      expect(await index.status()).toMatchObject({ fresh: true });
      const before = await search(index, "parser");
      await index.rebuild();
      expect(await search(index, "parser")).toEqual(before);
      expect(before).toContain(ids.u1);
    } finally {
      await index.close();
      await a.close();
      await b.close();
    }
  });

  it("refresh: false answers from the index as it is (nothing caught up, status still behind); a bad value is INVALID_OPTION", async () => {
    const options = await backend.options();
    const { a, b, ids } = await write(options);
    const index = await openSessionIndex(options);
    try {
      await index.refresh();
      const late = a.appendMessage({ role: "user", content: "an okapi arrives late", timestamp: 5 });
      await a.flush();
      expect(await search(index, "okapi", { refresh: false })).toEqual([]);
      expect(await search(index, "parser", { refresh: false })).toContain(ids.u1);
      expect((await index.status()).fresh).toBe(false);
      expect(await search(index, "okapi")).toEqual([late]);
      expect(await search(index, "okapi", { refresh: false })).toEqual([late]);
      await expectCode(index.search("okapi", { refresh: "no" as unknown as boolean }), "INVALID_OPTION");
    } finally {
      await index.close();
      await a.close();
      await b.close();
    }
  });
});
