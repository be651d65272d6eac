import type { QueryTerm } from "./index-query.ts";

/** Tokens a snippet shows (the matches and their context). @default 24 */
export const SNIPPET_TOKENS = 24;

interface Token {
  start: number;
  end: number;
  norm: string;
}

/** What the index's tokenizer (FTS5 unicode61, remove_diacritics 2) keeps as one token. */
const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu;
const MARKS = /\p{M}/gu;

/** A token as the tokenizer compares it: lower case, diacritics removed. */
function normalize(text: string): string {
  return text.normalize("NFD").replace(MARKS, "").toLowerCase();
}

function tokenize(text: string): Token[] {
  return Array.from(text.matchAll(TOKEN), (m) => ({ start: m.index, end: m.index + m[0].length, norm: normalize(m[0]) }));
}

/** The token sequence each term must match, and whether its last token is a prefix. */
function termPatterns(terms: readonly QueryTerm[]): { tokens: string[]; prefix: boolean }[] {
  return terms
    .map((t) => ({ tokens: tokenize(t.text).map((k) => k.norm), prefix: t.kind === "prefix" }))
    .filter((p) => p.tokens.length > 0);
}

/** [first, last] token index of every place a term matches. */
function matches(tokens: Token[], terms: readonly QueryTerm[]): [number, number][] {
  const spans: [number, number][] = [];
  for (const { tokens: pattern, prefix } of termPatterns(terms)) {
    for (let i = 0; i + pattern.length <= tokens.length; i++) {
      let ok = true;
      for (let k = 0; k < pattern.length && ok; k++) {
        const token = tokens[i + k]!.norm;
        const last = k === pattern.length - 1;
        ok = last && prefix ? token.startsWith(pattern[k]!) : token === pattern[k];
      }
      if (ok) spans.push([i, i + pattern.length - 1]);
    }
  }
  return spans.sort((a, b) => a[0] - b[0]);
}

/**
 * A one-line excerpt of `text` around the first match of `terms` (pure): about `SNIPPET_TOKENS`
 * tokens, whitespace collapsed, `…` where it is cut, each match between `open` and `close`. The
 * matching mirrors the index's tokenizer (letters and digits, case and diacritics ignored). No
 * match found (the text changed since it was indexed) → the start of the text, unmarked.
 */
export function makeSnippet(text: string, terms: readonly QueryTerm[], open: string, close: string): string {
  const tokens = tokenize(text);
  if (tokens.length === 0) return "";
  const spans = matches(tokens, terms);
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
  const head = from > 0 ? "…" : "";
  const tail = to < tokens.length - 1 ? "…" : "";
  return head + out.replace(/\s+/gu, " ").trim() + tail;
}

/** Marks the start and end of a matched span in `SearchHit.snippet`. */
export const HIGHLIGHT_START = "\u00ab";
export const HIGHLIGHT_END = "\u00bb";
