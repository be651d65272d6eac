import { describe, expect, it } from "vitest";
import { isStoreError } from "../../../../src/errors.ts";
import { PgStore } from "../../../../src/storage/postgres/db/index.ts";
import { compileQuery, MAX_QUERY_CHARS, parseQuery, SEARCH_SQL, searchParams } from "../../../../src/storage/postgres/db/search-query.ts";
import { MAX_SEARCH_TEXT_CHARS } from "../../../../src/storage/postgres/db/search-text.ts";
import { resolveSessionManagerOptions } from "../../../../src/session/session-options.ts";
import { PostgresBackend } from "../../../../src/storage/postgres/pg-backend.ts";
import { resolveSearchOptions } from "../../../../src/storage/postgres/pg-index.ts";
import { message, openIndex, session } from "../../../support/pg-search.ts";
import { freshStore, rawPool, track } from "../../../support/pg-sessions.ts";
import { pgCluster } from "../../../support/postgres.ts";

/** Strings that are syntax somewhere: tsquery operators, SQL quoting, escapes, LIKE and regex characters. */
const HOSTILE = [
  "it's",
  "O'Brien''s",
  "back\\slash",
  "trailing\\",
  "a & b",
  "a | b",
  "!negated",
  "a <-> b",
  "a <2> b",
  "lex:*",
  "lex:AB",
  "(group)",
  "'); DROP TABLE entries; --",
  "$1 $$dollar$$",
  "50% _under_",
  "[a-z]+.*",
  "émigré café",
  "emoji 🚀 rocket",
  "tab\there",
  "\ud800lone",
];

describe("search query syntax (pure)", () => {
  it("splits words, phrases and prefixes; everything else is text", () => {
    expect(parseQuery(' alpha  "beta gamma" delt* "x*" ')).toEqual([
      { kind: "word", text: "alpha" },
      { kind: "phrase", text: "beta gamma" },
      { kind: "prefix", text: "delt" },
      { kind: "phrase", text: "x*" },
    ]);
    expect(parseQuery("a&b|!c")).toEqual([{ kind: "word", text: "a&b|!c" }]);
  });

  it("refuses what cannot be a query with INVALID_QUERY", () => {
    for (const bad of ["", "   ", "*", '""', '"unclosed', "nul\u0000byte", "x".repeat(MAX_QUERY_CHARS + 1), 42]) {
      let code: string | undefined;
      try {
        parseQuery(bad);
      } catch (err) {
        code = isStoreError(err) ? err.code : "other";
      }
      expect(code, JSON.stringify(bad)).toBe("INVALID_QUERY");
    }
  });
});

describe.skipIf(!pgCluster())("PostgreSQL search index: hostile queries", () => {
  it("a hostile string finds the entry holding it, as text; one with no word is INVALID_QUERY; nothing else changes", async () => {
    const { store, url } = await freshStore();
    const lines = HOSTILE.map((h, i) => message("user", `entry${i} says ${h} end`));
    const s = await session(store, lines);
    const index = await openIndex(store);
    await index.refresh();
    for (const [i, h] of HOSTILE.entries()) {
      const hits = await index.search(h, { limit: 100 });
      expect(
        hits.map((hit) => hit.entryId),
        JSON.stringify(h),
      ).toContain(lines[i]!.entryId);
      const quoted = await index.search(`"${h.replaceAll('"', "")}"`, { limit: 100 });
      expect(
        quoted.map((hit) => hit.entryId),
        JSON.stringify(h),
      ).toContain(lines[i]!.entryId);
    }
    for (const bad of ["!!!", "& | !", "<->", "'", "\\", "\\'", ":*", "()", '"&"', "*** ***"]) {
      await expect(index.search(bad), JSON.stringify(bad)).rejects.toMatchObject({ code: "INVALID_QUERY" });
    }
    const db = rawPool(url);
    expect((await db.query("SELECT count(*)::int AS n FROM entries WHERE session_id = $1", [s.id])).rows).toEqual([{ n: HOSTILE.length }]);
  });

  it("indexes NUL and lone surrogates (as U+FFFD), a huge text whole (in parts); counts a torn line", async () => {
    const { store } = await freshStore();
    const huge = `head ${"filler ".repeat(MAX_SEARCH_TEXT_CHARS / 7 + 10)} beyondthecut`;
    const lines = [message("user", "nul\u0000inside lone\ud800surrogate"), message("toolResult", huge)];
    await session(store, [...lines, { line: '{"type":"message", torn head', entryId: null, kind: null }]);
    const index = await openIndex(store);
    expect(await index.refresh()).toMatchObject({ entriesIndexed: 2, malformedLines: 1 }); // the torn line stays in entries
    expect((await index.search("inside surrogate")).map((h) => h.entryId)).toEqual([lines[0]!.entryId]);
    expect((await index.search("head")).map((h) => h.entryId)).toEqual([lines[1]!.entryId]);
    expect((await index.search("beyondthecut")).map((h) => h.entryId)).toEqual([lines[1]!.entryId]); // past the first part: one hit
  });

  it("finds a tool result by the whole spilled output it points to (artifact://n)", async () => {
    const { store, url } = await freshStore();
    const lines = [
      message("toolResult", "output cut; full output: artifact://007"),
      message("toolResult", "see artifact://9 (never stored)"),
    ];
    const s = await session(store, lines);
    const content = `deepword at the head ${"pad ".repeat((64 * 1024) / 4)} farword`;
    const small = track(await PgStore.connect(url, { artifactChunkBytes: 1000 })); // the head spans 66 chunk rows
    await small.artifacts.put(s.id, "7.bash.log", Buffer.from(content), {}, s.token);
    await store.artifacts.put(s.id, "70.bash.log", Buffer.from("wrongword"), {}, s.token);
    const index = await openIndex(store);
    expect(await index.refresh()).toMatchObject({ entriesIndexed: 2, artifactBytesRead: Buffer.byteLength(content) });
    expect((await index.search("deepword")).map((h) => [h.entryId, h.role])).toEqual([[lines[0]!.entryId, "toolResult"]]);
    expect((await index.search("farword")).map((h) => h.entryId)).toEqual([lines[0]!.entryId]); // no cut (issue 34)
    expect(await index.search("wrongword")).toEqual([]); // artifact 70 is not artifact 7
  });

  it("a prefix of a hostile word is still a prefix, never tsquery syntax", async () => {
    const { store } = await freshStore();
    const lines = [message("user", "don't stop"), message("user", "backslash\\path"), message("user", "plain words")];
    await session(store, lines);
    const index = await openIndex(store);
    expect((await index.search("don'*")).map((h) => h.entryId)).toEqual([lines[0]!.entryId]);
    expect((await index.search("backsl*")).map((h) => h.entryId)).toEqual([lines[1]!.entryId]);
    expect((await index.search("pla* wor*")).map((h) => h.entryId)).toEqual([lines[2]!.entryId]);
    // ":*" is not tsquery syntax here: ":" is punctuation, the trailing "*" makes "words" a prefix
    expect((await index.search("words:*")).map((h) => h.entryId)).toEqual([lines[2]!.entryId]);
    expect(await index.search("words:A")).toEqual([]); // not a weight: the word "a" is required too
  });

  it("the search statement uses the GIN index (plan of SEARCH_SQL on 3,000 entries, statistics fresh)", async () => {
    const { store, url } = await freshStore();
    const s = await session(store, []);
    for (let batch = 0; batch < 6; batch++) {
      await s.append(Array.from({ length: 500 }, (_, i) => message("user", `filler text number ${batch * 500 + i} about ordinary things`)));
    }
    await s.append([message("user", "needle in a haystack")]);
    const index = await openIndex(store);
    await index.refresh();
    const db = rawPool(url);
    await db.query("ANALYZE search_entries");
    const tsquery = await compileQuery(store.pool, parseQuery("needle hay*"));
    const plan = await db.query(`EXPLAIN ${SEARCH_SQL}`, searchParams(tsquery, resolveSearchOptions({})));
    expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("Bitmap Index Scan on search_entries_doc");
    expect((await index.search("needle hay*")).map((h) => h.snippet)).toEqual(["«needle» in a «haystack»"]);
  });

  it("is opened through the backend (StorageBackend.index) and names hits by the backend", async () => {
    const { store, url } = await freshStore();
    const s = await session(store, [message("user", "through the backend")]);
    const backend = PostgresBackend.of(url);
    try {
      const index = await backend.index(resolveSessionManagerOptions({}));
      const hits = await index.search("backend");
      expect(hits.map((h) => [h.sessionId, h.location])).toEqual([[s.id, `${backend.name}#${s.id}`]]);
      await index.close();
      await expect(index.search("backend")).rejects.toMatchObject({ code: "INVALID_OPTION" });
    } finally {
      await backend.close();
    }
  });
});
