import { describe, expect, it } from "vitest";
import { message, openIndex, session } from "../../../support/pg-search.ts";
import { freshStore } from "../../../support/pg-sessions.ts";
import { pgCluster } from "../../../support/postgres.ts";

describe.skipIf(!pgCluster())("PostgreSQL search index", () => {
  it("finds words, phrases and prefixes, every term required, ranked, with the hit's facts and a highlighted snippet", async () => {
    const { store } = await freshStore();
    const a = await session(store, [
      message("user", "Please refactor the transcript parser"),
      message("assistant", "The parser is refactored; the transcript parser now streams", { model: "m1" }),
    ]);
    const b = await session(store, [message("user", "parser of transcripts elsewhere")], "/other");
    const index = await openIndex(store);
    const hits = await index.search("parser transcript");
    // word forms: "transcripts" in b is a form of "transcript"
    expect(hits.map((h) => [h.sessionId, h.role])).toEqual([
      [a.id, "assistant"],
      [b.id, "user"],
      [a.id, "user"],
    ]);
    expect(hits[0]).toMatchObject({
      entryId: "00000002",
      timestamp: "2026-11-20T10:00:00.000Z",
      cwd: "/home/demo/project",
      location: `pg#${a.id}`,
    });
    expect(hits[0]!.score).toBeGreaterThan(hits[2]!.score);
    expect(hits[0]!.snippet).toContain("«parser»");
    expect((await index.search('"transcript parser"')).map((h) => h.entryId).sort()).toEqual(["00000001", "00000002"]);
    expect(await index.search('"parser transcript"')).toEqual([]);
    expect((await index.search("transcr*")).map((h) => h.sessionId).sort()).toEqual([a.id, a.id, b.id].sort());
    expect((await index.search("TRANSCRIPTS")).map((h) => h.sessionId)).toHaveLength(3); // any form, any case
    expect((await index.search('"TRANSCRIPTS"')).map((h) => h.sessionId)).toEqual([b.id]); // quoted: that form only
    expect(await index.search("transcr")).toEqual([]);
  });

  it("filters by cwd, time, role, model, session and limit", async () => {
    const { store } = await freshStore();
    const a = await session(store, [
      message("user", "alpha early", { timestamp: "2026-01-01T00:00:00.000Z" }),
      message("assistant", "alpha answer", { thinking: "alpha pondering", model: "big", timestamp: "2026-02-01T00:00:00.000Z" }),
      message("toolResult", "alpha output", { timestamp: "2026-03-01T00:00:00.000Z" }),
    ]);
    const b = await session(store, [message("assistant", "alpha other", { model: "small", timestamp: "2026-04-01T00:00:00.000Z" })], "/b");
    const index = await openIndex(store);
    const roles = async (options: Parameters<typeof index.search>[1]) => (await index.search("alpha", options)).map((h) => h.role).sort();
    expect(await roles({})).toEqual(["assistant", "assistant", "thinking", "toolResult", "user"]);
    expect((await index.search("alpha", { cwd: "/b" })).map((h) => h.sessionId)).toEqual([b.id]);
    expect(await roles({ session: a.id })).toEqual(["assistant", "thinking", "toolResult", "user"]);
    expect(await roles({ roles: ["thinking", "user"] })).toEqual(["thinking", "user"]);
    // the model in effect: named by an assistant message (or a model change), carried to the entries after it
    expect(await roles({ model: "big" })).toEqual(["assistant", "thinking", "toolResult"]);
    expect(await roles({ model: "BI" })).toEqual(["assistant", "thinking", "toolResult"]); // a substring, any case
    expect(await roles({ session: a.id.slice(0, 8) })).toEqual(["assistant", "thinking", "toolResult", "user"]); // an id prefix
    expect(await roles({ since: new Date("2026-02-01T00:00:00Z"), until: new Date("2026-03-01T00:00:00Z") })).toEqual([
      "assistant",
      "thinking",
      "toolResult",
    ]);
    expect(await index.search("alpha", { limit: 2 })).toHaveLength(2);
    // carried across refreshes: a model change indexed alone, then an entry after it
    await b.append([
      {
        line: JSON.stringify({ type: "model_change", id: "mc1", parentId: null, timestamp: "t", modelId: "Later-1" }),
        entryId: "mc1",
        kind: "model_change",
      },
    ]);
    await index.refresh();
    await b.append([message("user", "alpha after the change")]);
    expect((await index.search("alpha", { model: "later" })).map((h) => [h.sessionId, h.role])).toEqual([[b.id, "user"]]);
    expect(await index.search("pondering", { roles: ["assistant"] })).toEqual([]);
    for (const bad of [{ limit: 0 }, { limit: 1.5 }, { roles: ["system"] }, { since: new Date("x") }, { cwd: "" }] as object[]) {
      await expect(index.search("alpha", bad)).rejects.toMatchObject({ code: "INVALID_OPTION" });
    }
  });
});
