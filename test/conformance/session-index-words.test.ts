import { expect, it } from "vitest";
import { SessionManager } from "../../src/index.ts";
import { openSessionIndex, type SessionIndex } from "../../src/search/session-index.ts";
import { describeBackends } from "./backends.ts";

const DAY = 86_400_000;
const NOW = new Date("2026-06-01T12:00:00.000Z");

/** A clock the sessions are written under: each call a second later, from `start`. */
function clock(start: Date): () => Date {
  let t = start.getTime();
  return () => {
    t += 1000;
    return new Date(t);
  };
}

const ids = async (index: SessionIndex, query: string, options?: Parameters<SessionIndex["search"]>[1]) =>
  (await index.search(query, { now: NOW, ...options })).map((h) => h.entryId).sort();

// Issue 34: word forms, identifier parts, one hit per entry, titles and the recency blend, on both backends.
describeBackends("SessionIndex word forms, copies and ranking (issue 34)", { needs: ["index"] }, (backend) => {
  it("finds a word's inflections and the parts of identifiers; a quoted phrase keeps its exact form", async () => {
    const options = await backend.options();
    const s = await SessionManager.create("/work/words", { ...options, now: clock(NOW) });
    const e = {
      crashes: s.appendMessage({ role: "user", content: "the build crashes on empty input", timestamp: 1 }),
      crashed: s.appendMessage({ role: "user", content: "it crashed again yesterday", timestamp: 2 }),
      crash: s.appendMessage({ role: "user", content: "one more crash", timestamp: 3 }),
      camel: s.appendMessage({ role: "user", content: "parseStatement failed", timestamp: 4 }),
      snake: s.appendMessage({ role: "user", content: "see parse_statement here", timestamp: 5 }),
      kebab: s.appendMessage({ role: "user", content: "and parse-statement there", timestamp: 6 }),
      pascal: s.appendMessage({ role: "user", content: "the HTTPServer started", timestamp: 7 }),
    };
    await s.flush();
    const index = await openSessionIndex(options);
    try {
      expect(await ids(index, "crash")).toEqual([e.crashes, e.crashed, e.crash].sort());
      expect(await ids(index, "crashing")).toEqual([e.crashes, e.crashed, e.crash].sort());
      expect(await ids(index, '"crashes"')).toEqual([e.crashes]);
      expect(await ids(index, '"crash"')).toEqual([e.crash]);
      const identifier = [e.camel, e.snake, e.kebab].sort();
      expect(await ids(index, "parse statement")).toEqual(identifier);
      expect(await ids(index, "parseStatement")).toEqual(identifier);
      expect(await ids(index, "parse_statement")).toEqual(identifier);
      // quoted: the words as written, in any case, apart at any punctuation; a compound only as itself
      expect(await ids(index, '"parse statement"')).toEqual([e.snake, e.kebab].sort());
      expect(await ids(index, '"parseStatement"')).toEqual([e.camel]);
      expect(await ids(index, "server")).toEqual([e.pascal]);
      expect(await ids(index, "http server")).toEqual([e.pascal]);
      const [hit] = await index.search("crash", { now: NOW, session: s.sessionId, limit: 20 });
      expect(hit!.snippet).toMatch(/«crash(es|ed)?»/);
      const [camel] = await index.search("parse statement", { now: NOW, limit: 20, sort: "recent" });
      expect(camel!.entryId).toBe(e.kebab);
    } finally {
      await index.close();
      await s.close();
    }
  });

  it("finds a pasted token or identifier whose snake_case joins a camelCase part, unquoted as rg would", async () => {
    const options = await backend.options();
    const s = await SessionManager.create("/work/tokens", { ...options, now: clock(NOW) });
    const token = s.appendMessage({ role: "user", content: "push with 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 please", timestamp: 1 });
    const mixed = s.appendMessage({ role: "user", content: "then call old_parseStatement once", timestamp: 2 });
    await s.flush();
    const index = await openSessionIndex(options);
    try {
      expect(await ids(index, "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")).toEqual([token]);
      expect(await ids(index, "old_parseStatement")).toEqual([mixed]);
      expect(await ids(index, "parseStatement")).toEqual([mixed]);
      expect(await ids(index, "old parse statement")).toEqual([mixed]);
    } finally {
      await index.close();
      await s.close();
    }
  });

  it("gives one hit per entry: copies in forks fold into it (alsoIn), the limit counts entries", async () => {
    const options = await backend.options();
    const s = await SessionManager.create("/work/forks", { ...options, now: clock(NOW) });
    const first = s.appendMessage({ role: "user", content: "the okapi question, asked first", timestamp: 1 });
    const second = s.appendMessage({ role: "assistant", content: [{ type: "text", text: "an okapi answer" }], model: "m", timestamp: 2 });
    await s.flush();
    const f1 = await s.fork();
    const f2 = await s.fork();
    await f1.flush();
    await f2.flush();
    const index = await openSessionIndex(options);
    try {
      const hits = await index.search("okapi", { now: NOW, limit: 2 });
      expect(hits.map((h) => h.entryId).sort()).toEqual([first, second].sort());
      for (const hit of hits) {
        const all = [hit.sessionId, ...hit.alsoIn].sort();
        expect(all).toEqual([s.sessionId, f1.sessionId, f2.sessionId].sort());
      }
      expect(hits[0]!.title).toBe("the okapi question, asked first");
      expect(hits[0]!.cwd).toBe("/work/forks");
    } finally {
      await index.close();
      for (const m of [s, f1, f2]) await m.close();
    }
  });

  it("blends relevance with recency (relevance / (1 + age / 30 days)); sort: recent is newest first", async () => {
    const options = await backend.options();
    const old = await SessionManager.create("/work/old", { ...options, now: clock(new Date(NOW.getTime() - 90 * DAY)) });
    const oldHit = old.appendMessage({ role: "user", content: "zebra crossing notes", timestamp: 1 });
    await old.flush();
    const fresh = await SessionManager.create("/work/new", { ...options, now: clock(new Date(NOW.getTime() - DAY)) });
    const newHit = fresh.appendMessage({ role: "user", content: "zebra crossing notes", timestamp: 2 });
    await fresh.flush();
    const index = await openSessionIndex(options);
    try {
      const ranked = await index.search("zebra", { now: NOW });
      expect(ranked.map((h) => h.entryId)).toEqual([newHit, oldHit]);
      // equal relevance: the scores stand in the ratio of the blend's divisors (1 + 1/30 against 1 + 90/30)
      expect(ranked[0]!.score / ranked[1]!.score).toBeCloseTo((1 + 90 / 30) / (1 + 1 / 30), 3);
      const recent = await index.search("zebra", { now: NOW, sort: "recent" });
      expect(recent.map((h) => h.entryId)).toEqual([newHit, oldHit]);
      // asked as of a time before the new one was written, the old one is the fresher: still by time
      expect((await index.search("zebra", { sort: "recent", now: NOW })).map((h) => h.entryId)[0]).toBe(newHit);
    } finally {
      await index.close();
      await old.close();
      await fresh.close();
    }
  });
});
