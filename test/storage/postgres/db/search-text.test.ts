import { describe, expect, it } from "vitest";
import {
  MAX_SEARCH_TEXT_CHARS,
  PART_OVERLAP_CHARS,
  searchEntryOf,
  searchTextsOf,
  textParts,
} from "../../../../src/storage/postgres/db/search-text.ts";

const line = (message: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: "message", id: "a1", parentId: null, timestamp: "2026-11-20T10:00:00.000Z", message, ...extra });

describe("searchTextsOf: the searchable text of a stored line (pure)", () => {
  it("gives one text per role: user, assistant with its tool calls, its thinking, tool results, pi's shell runs", () => {
    const assistant = line({
      role: "assistant",
      model: "m1",
      content: [
        { type: "thinking", thinking: "let me think" },
        { type: "text", text: "answer" },
        { type: "toolCall", name: "bash", arguments: { command: "ls -la" } },
        { type: "image", data: `blob:sha256:${"0".repeat(64)}` },
      ],
    });
    expect(searchTextsOf(assistant).map((t) => [t.role, t.text, t.model])).toEqual([
      ["assistant", 'answer\nbash {"command":"ls -la"}', "m1"],
      ["thinking", "let me think", "m1"],
    ]);
    expect(searchTextsOf(line({ role: "user", content: "plain string" }))).toEqual([
      { role: "user", text: "plain string", model: null, timestamp: "2026-11-20T10:00:00.000Z", at: new Date("2026-11-20T10:00:00.000Z") },
    ]);
    expect(searchTextsOf(line({ role: "toolResult", content: [{ type: "text", text: "out" }] })).map((t) => t.role)).toEqual([
      "toolResult",
    ]);
    expect(searchTextsOf(line({ role: "bashExecution", command: "make", output: "ok" })).map((t) => [t.role, t.text])).toEqual([
      ["toolResult", "make\nok"],
    ]);
  });

  it("gives each text the model in effect: the one the entry names, else the one before it", () => {
    const change = (extra: Record<string, unknown>) =>
      JSON.stringify({ type: "model_change", id: "m", parentId: null, timestamp: "t", ...extra });
    expect(searchEntryOf(change({ modelId: "a" }), "old")).toEqual({ texts: [], model: "a", malformed: false });
    expect(searchEntryOf(change({ model: "b" })).model).toBe("b");
    expect(searchEntryOf(change({ model: { id: "c" } })).model).toBe("c");
    expect(searchEntryOf(line({ role: "user", content: "hi" }), "old")).toMatchObject({ texts: [{ model: "old" }], model: null });
    expect(searchEntryOf(line({ role: "assistant", model: "new", content: "yo" }), "old")).toMatchObject({
      texts: [{ model: "new" }],
      model: "new",
    });
    expect(searchEntryOf("not json", "old")).toEqual({ texts: [], model: null, malformed: true });
    expect(searchEntryOf("[1]", "old")).toEqual({ texts: [], model: null, malformed: true });
  });

  it("gives nothing for other entries, other roles, empty text, and a line that is not JSON", () => {
    for (const other of [
      JSON.stringify({ type: "model_change", id: "a", parentId: null, timestamp: "t", model: "m" }),
      line({ role: "custom", content: "x" }),
      line({ role: "user", content: [] }),
      line({ role: "user", content: "" }),
      line({ role: "user", content: " \n\t " }),
      line("not an object"),
      '{"type":"message", torn',
      "[1,2]",
    ]) {
      expect(searchTextsOf(other), other).toEqual([]);
    }
  });

  it("makes text storable (NUL, lone surrogates → U+FFFD), keeps it whole, and parts a long one never inside a pair", () => {
    expect(searchTextsOf(line({ role: "user", content: "a\u0000b\ud800c" }))[0]!.text).toBe("a\ufffdb\ufffdc");
    const long = `${"x".repeat(MAX_SEARCH_TEXT_CHARS - 1)}😀tail`;
    const whole = searchTextsOf(line({ role: "user", content: long }))[0]!.text;
    expect(whole).toBe(long);
    const parts = textParts(whole);
    expect(parts).toEqual([`${"x".repeat(MAX_SEARCH_TEXT_CHARS - 1)}`, `${"x".repeat(PART_OVERLAP_CHARS)}😀tail`]);
    const huge = Array.from({ length: 60_000 }, (_, i) => `w${i}`).join(" ");
    const cuts = textParts(huge);
    expect(cuts.length).toBeGreaterThan(5);
    // every part within the bound, each repeating the end of the one before: together they hold every word
    for (const [i, part] of cuts.entries()) {
      expect(part.length).toBeLessThanOrEqual(MAX_SEARCH_TEXT_CHARS);
      if (i > 0) expect(cuts[i - 1]!.endsWith(part.slice(0, PART_OVERLAP_CHARS))).toBe(true);
    }
    expect(
      cuts[0]! +
        cuts
          .slice(1)
          .map((p) => p.slice(PART_OVERLAP_CHARS))
          .join(""),
    ).toBe(huge);
  });

  it("keeps a timestamp that does not parse, or lies outside years 1-9999, as text with no time", () => {
    for (const timestamp of ["t", "-100000-01-01T00:00:00.000Z", "+275760-09-13T00:00:00.000Z"]) {
      expect(searchTextsOf(line({ role: "user", content: "x" }, { timestamp }))[0]).toMatchObject({ timestamp, at: null });
    }
  });
});
