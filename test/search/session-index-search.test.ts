import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSessionIndex, type SessionIndex } from "../../src/search/session-index.ts";
import { expectCode } from "../support/error-code.ts";
import { tempDir } from "../support/temp-dir.ts";
import { message, writeSession } from "./helpers/sessions.ts";

const opened: SessionIndex[] = [];
afterEach(async () => {
  for (const index of opened.splice(0)) await index.close();
});

async function corpus() {
  const root = tempDir("ts-index-");
  const sessions = join(root, "sessions");
  writeSession(
    sessions,
    "-tmp-a",
    "aaaa1111-0000-4000-8000-000000000001",
    "/work/a",
    message("user", "Please refactor the parser module", { id: "u1", timestamp: "2026-01-02T10:00:00.000Z" }) +
      message("assistant", "The parser now streams its input", {
        id: "a1",
        timestamp: "2026-01-02T10:00:05.000Z",
        model: "claude-sonnet-4-5",
        thinking: "consider a streaming tokenizer",
      }) +
      message("toolResult", "error: parserless build failed", { id: "t1", timestamp: "2026-01-02T10:00:06.000Z" }),
  );
  writeSession(
    sessions,
    "-tmp-b",
    "bbbb2222-0000-4000-8000-000000000002",
    "/work/b",
    message("user", "why does the parser crash on empty input", { id: "u2", timestamp: "2026-03-01T09:00:00.000Z" }) +
      message("assistant", "Empty input crashes the lexer, not the parser", {
        id: "a2",
        timestamp: "2026-03-01T09:00:03.000Z",
        model: "gpt-5.1-codex",
      }),
  );
  const index = await openSessionIndex({ root });
  opened.push(index);
  return { root, index };
}

describe("SessionIndex search", () => {
  it("finds words in every session, each hit naming session, entry, role, time and cwd, ranked", async () => {
    const { index, root } = await corpus();
    const hits = await index.search("parser");
    expect(hits.map((h) => h.entryId).sort()).toEqual(["a1", "a2", "u1", "u2"]);
    for (const hit of hits) expect(hit.snippet).toContain("«parser»");
    const u2 = hits.find((h) => h.entryId === "u2")!;
    expect(u2).toMatchObject({
      sessionId: "bbbb2222-0000-4000-8000-000000000002",
      role: "user",
      timestamp: "2026-03-01T09:00:00.000Z",
      cwd: "/work/b",
      location: join(root, "sessions", "-tmp-b", "2026-01-01T00-00-00-000Z_bbbb2222-0000-4000-8000-000000000002.jsonl"),
    });
    const scores = hits.map((h) => h.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it("matches phrases exactly and prefixes by their start", async () => {
    const { index } = await corpus();
    expect((await index.search('"empty input"')).map((h) => h.entryId).sort()).toEqual(["a2", "u2"]);
    expect((await index.search('"input empty"')).map((h) => h.entryId)).toEqual([]);
    expect((await index.search("parserl*")).map((h) => h.entryId)).toEqual(["t1"]);
    // every term must match
    expect((await index.search("parser lexer")).map((h) => h.entryId)).toEqual(["a2"]);
  });

  it("indexes thinking apart from the assistant's text", async () => {
    const { index } = await corpus();
    const hits = await index.search("tokenizer");
    expect(hits.map((h) => [h.entryId, h.role])).toEqual([["a1", "thinking"]]);
    expect((await index.search("tokenizer", { roles: ["assistant"] })).length).toBe(0);
  });

  it("filters by cwd, time range, role, model and session", async () => {
    const { index } = await corpus();
    const ids = async (options: Parameters<SessionIndex["search"]>[1]) =>
      (await index.search("parser", options)).map((h) => h.entryId).sort();
    expect(await ids({ cwd: "/work/a" })).toEqual(["a1", "u1"]);
    expect(await ids({ since: new Date("2026-02-01T00:00:00Z") })).toEqual(["a2", "u2"]);
    expect(await ids({ until: new Date("2026-01-02T10:00:00.000Z") })).toEqual(["u1"]);
    expect(await ids({ roles: ["user"] })).toEqual(["u1", "u2"]);
    expect(await ids({ roles: ["toolResult"] })).toEqual([]);
    // an entry carries the model of its assistant message, or the last one before it
    expect(await ids({ model: "CODEX" })).toEqual(["a2"]);
    expect(await ids({ model: "sonnet" })).toEqual(["a1"]);
    expect(await ids({ session: "bbbb" })).toEqual(["a2", "u2"]);
    expect(await ids({ limit: 1 })).toHaveLength(1);
  });

  it("refuses what it cannot read with INVALID_QUERY or INVALID_OPTION", async () => {
    const { index } = await corpus();
    await expectCode(index.search('"unclosed'), "INVALID_QUERY");
    await expectCode(index.search("   "), "INVALID_QUERY");
    await expectCode(index.search("pa*rser"), "INVALID_QUERY");
    await expectCode(index.search("*"), "INVALID_QUERY");
    await expectCode(index.search("-- ..."), "INVALID_QUERY");
    // FTS5 operators are words here, never syntax
    expect((await index.search("parser NOT")).map((h) => h.entryId)).toEqual(["a2"]);
    expect((await index.search("parser AND lexer")).length).toBe(0);
    await expectCode(index.search("parser", { roles: ["system" as "user"] }), "INVALID_OPTION");
    await expectCode(index.search("parser", { since: new Date("nope") }), "INVALID_OPTION");
    await expectCode(index.search("parser", { limit: 0 }), "INVALID_OPTION");
  });

  it("ranks by relevance up to maxRankedMatches, past it lists the newest matches first (filters still applied)", async () => {
    const root = tempDir("ts-index-");
    let body = "";
    for (let i = 0; i < 12; i++)
      body += message(i % 2 ? "user" : "assistant", `common word number ${i}`, { id: `m${i.toString().padStart(2, "0")}` });
    writeSession(join(root, "sessions"), "-tmp-a", "aaaa1111-0000-4000-8000-000000000001", "/w", body);
    const ranked = await openSessionIndex({ root, maxRankedMatches: 100 });
    opened.push(ranked);
    expect((await ranked.search("common", { limit: 20 })).map((h) => h.entryId).sort()).toHaveLength(12);
    await ranked.close();
    const recent = await openSessionIndex({ root, maxRankedMatches: 5 });
    opened.push(recent);
    expect((await recent.search("common", { limit: 3 })).map((h) => h.entryId)).toEqual(["m11", "m10", "m09"]);
    expect((await recent.search("common", { limit: 3, roles: ["user"] })).map((h) => h.entryId)).toEqual(["m11", "m09", "m07"]);
    for (const hit of await recent.search("common", { limit: 3 })) expect(hit.score).toBeGreaterThan(0);
    await expectCode(openSessionIndex({ root, maxRankedMatches: -1 }), "INVALID_OPTION");
  });
});
