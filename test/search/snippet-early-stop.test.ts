import { describe, expect, it } from "vitest";
import { prng } from "../../fixtures/seeded.ts";
import { type QueryTerm, parseQuery } from "../../src/search/index-query.ts";
import { makeSnippet, SNIPPET_TOKENS } from "../../src/search/snippet.ts";

// The snippet stops tokenizing a window past the first match. This is the snippet as it was made
// before, from every token of the text: both must agree on every text and query.
const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu;
const normalize = (t: string) => t.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
function fullScanSnippet(text: string, terms: readonly QueryTerm[], open: string, close: string): string {
  const tokenize = (t: string) =>
    Array.from(t.matchAll(TOKEN), (m) => ({ start: m.index, end: m.index + m[0].length, norm: normalize(m[0]) }));
  const tokens = tokenize(text);
  if (tokens.length === 0) return "";
  const spans: [number, number][] = [];
  for (const term of terms) {
    const pattern = tokenize(term.text).map((k) => k.norm);
    if (pattern.length === 0) continue;
    for (let i = 0; i + pattern.length <= tokens.length; i++) {
      let ok = true;
      for (let k = 0; k < pattern.length && ok; k++) {
        const last = k === pattern.length - 1;
        ok = last && term.kind === "prefix" ? tokens[i + k]!.norm.startsWith(pattern[k]!) : tokens[i + k]!.norm === pattern[k];
      }
      if (ok) spans.push([i, i + pattern.length - 1]);
    }
  }
  spans.sort((a, b) => a[0] - b[0]);
  const first = spans[0]?.[0] ?? 0;
  const from = Math.max(0, Math.min(first - Math.floor(SNIPPET_TOKENS / 4), tokens.length - SNIPPET_TOKENS));
  const to = Math.min(tokens.length - 1, Math.max(from + SNIPPET_TOKENS - 1, spans[0]?.[1] ?? 0));
  let out = "";
  let at = from === 0 ? 0 : tokens[from]!.start;
  const inWindow = spans.filter(([a, b]) => a >= from && b <= to);
  let next = 0;
  for (let i = from; i <= to; i++) {
    const span = inWindow[next];
    if (span !== undefined && span[0] === i) {
      out += text.slice(at, tokens[i]!.start) + open;
      at = tokens[i]!.start;
      out += text.slice(at, tokens[span[1]]!.end) + close;
      at = tokens[span[1]]!.end;
      i = span[1];
      while (inWindow[next] !== undefined && inWindow[next]![0] <= span[1]) next++;
    }
  }
  out += text.slice(at, to === tokens.length - 1 ? text.length : tokens[to]!.end);
  return (from > 0 ? "…" : "") + out.replace(/\s+/gu, " ").trim() + (to < tokens.length - 1 ? "…" : "");
}

const WORDS = ["alpha", "beta", "gamma", "delta", "Crème", "brûlée", "café", "foo", "bar", "foo-bar", "x1", "日本", "alphabet", "ALPHA"];
const SEPARATORS = [" ", "  ", "\n", ", ", ". ", "-", "_", " (", ") "];

describe("makeSnippet, stopping a window past the first match", () => {
  it("gives the snippet a scan of every token gives, on 3,000 seeded texts and queries (matches early, late, at the end, none)", () => {
    const random = prng(42);
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
    const queries = [
      "alpha",
      "alph*",
      '"foo bar"',
      "foo-bar",
      "creme cafe",
      '"gamma delta" beta',
      "日本",
      "x1 bar*",
      "absent",
      "delta",
      "b*",
    ];
    // terms that start on the same token (which one marks it), and phrases longer than the window
    queries.push('foo "foo bar"', '"foo bar" foo', "alph* alpha", "alpha alph*");
    let compared = 0;
    for (let n = 0; n < 3000; n++) {
      const length = Math.floor(random() ** 2 * 400);
      const words = Array.from({ length }, () => pick(WORDS));
      const text = words.map((w) => w + pick(SEPARATORS)).join("");
      const start = Math.floor(random() * length);
      const long = `"${words.slice(start, start + 20 + Math.floor(random() * 20)).join(" ")}"`;
      // a word of the long phrase first: found before the phrase, which starts earlier and ends later
      const inner = words[Math.min(length - 1, start + 10)]?.replace(/[^\p{L}\p{N}]/gu, "") || "alpha";
      const r = random();
      const query = length === 0 ? pick(queries) : r < 0.15 ? long : r < 0.3 ? `${inner} ${long}` : pick(queries);
      const terms = parseQuery(query);
      expect(makeSnippet(text, terms, "[", "]"), `${JSON.stringify(text)}`).toBe(fullScanSnippet(text, terms, "[", "]"));
      compared++;
    }
    expect(compared).toBe(3000);
  });

  it("marks every match inside the window, after a long text's first match, and says the text goes on", () => {
    const text = `${"lead ".repeat(10)}needle x needle ${"tail ".repeat(10_000)}needle`;
    const out = makeSnippet(text, parseQuery("needle"), "[", "]");
    expect(out).toBe(`…lead lead lead lead lead lead [needle] x [needle] ${"tail ".repeat(SNIPPET_TOKENS - 10)}tail…`);
  });
});
