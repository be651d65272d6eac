import { describe, expect, it } from "vitest";
import { parseQuery } from "../../src/search/index-query.ts";
import { makeSnippet, SNIPPET_TOKENS } from "../../src/search/snippet.ts";

const snip = (text: string, query: string) => makeSnippet(text, parseQuery(query), "[", "]");

describe("makeSnippet", () => {
  it("marks words, phrases and prefixes as the tokenizer matches them (case and diacritics ignored)", () => {
    expect(snip("The Parser parses; parser!", "parser")).toBe("The [Parser] parses; [parser]!");
    expect(snip("empty input, then input empty", '"empty input"')).toBe("[empty input], then input empty");
    expect(snip("refactor refactoring refine", "refact*")).toBe("[refactor] [refactoring] refine");
    expect(snip("Crème brûlée au café", "creme cafe")).toBe("[Crème] brûlée au [café]");
    // a query word joined by punctuation is a phrase of its tokens
    expect(snip("see foo-bar and foo bar", "foo-bar")).toBe("see [foo-bar] and [foo bar]");
  });

  it("marks a token searched verbatim that mixes `_`/`-` with case and digits (issue 34, as the index finds it)", () => {
    const text = "key 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 then sk-ant-abc123XYZ end";
    expect(snip(text, "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")).toBe(
      "key [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] then sk-ant-abc123XYZ end",
    );
    expect(snip(text, "sk-ant-abc123XYZ")).toBe("key 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 then [sk-ant-abc123XYZ] end");
    expect(snip(text, "sk-ant-abc123*")).toBe("key 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 then [sk-ant-abc123XYZ] end");
  });

  it("shows about SNIPPET_TOKENS tokens around the first match, whitespace collapsed, … where cut", () => {
    const words = Array.from({ length: 200 }, (_, i) => `w${i}`);
    words[100] = "needle";
    const out = snip(words.join("\n  "), "needle");
    expect(out.startsWith("…w")).toBe(true);
    expect(out.endsWith("…")).toBe(true);
    expect(out).toContain("[needle]");
    expect(out).not.toContain("\n");
    expect(out.replace(/…/g, "").split(" ")).toHaveLength(SNIPPET_TOKENS);
  });

  it("without a match (the text changed since indexed) shows the text's start, unmarked", () => {
    expect(snip("nothing to see here", "absent")).toBe("nothing to see here");
    expect(snip("", "absent")).toBe("");
  });
});
