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

/** Lower case alone for an ASCII token (NFD and mark removal change nothing there). */
function normalizeToken(token: string): string {
  for (let i = 0; i < token.length; i++) if (token.charCodeAt(i) > 0x7f) return normalize(token);
  return token.toLowerCase();
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

/** True when `pattern` matches the tokens from index `at`. */
function matchesAt(tokens: Token[], at: number, pattern: { tokens: string[]; prefix: boolean }): boolean {
  for (let k = 0; k < pattern.tokens.length; k++) {
    const token = tokens[at + k]!.norm;
    const last = k === pattern.tokens.length - 1;
    if (!(last && pattern.prefix ? token.startsWith(pattern.tokens[k]!) : token === pattern.tokens[k])) return false;
  }
  return true;
}

/**
 * The text's tokens up to what the snippet needs, and every match among them as [first, last, term].
 * Tokenizing stops a window past the first match (a hit's text can be 64K characters; its snippet
 * needs a few dozen tokens): `total` is then unknown (Infinity), and larger than any index used.
 */
function scan(text: string, terms: readonly QueryTerm[]): { tokens: Token[]; spans: [number, number, number][]; total: number } {
  const patterns = termPatterns(terms);
  const longest = Math.max(1, ...patterns.map((p) => p.tokens.length));
  const tokens: Token[] = [];
  const spans: [number, number, number][] = [];
  let needed = Number.POSITIVE_INFINITY;
  for (const m of text.matchAll(TOKEN)) {
    if (tokens.length >= needed) return { tokens, spans: sortSpans(spans), total: Number.POSITIVE_INFINITY };
    tokens.push({ start: m.index, end: m.index + m[0].length, norm: normalizeToken(m[0]) });
    const i = tokens.length - 1;
    patterns.forEach((pattern, p) => {
      const at = i - pattern.tokens.length + 1;
      if (at >= 0 && matchesAt(tokens, at, pattern)) spans.push([at, i, p]);
    });
    // the first match found starts at most `longest - 1` tokens after the earliest one: enough tokens
    // to settle the earliest, then the window after it, then one more to know whether the text goes on
    if (needed === Number.POSITIVE_INFINITY && spans.length > 0) {
      needed = Math.max(0, spans[0]![0] - Math.floor(SNIPPET_TOKENS / 4)) + SNIPPET_TOKENS + longest + 1;
    }
  }
  return { tokens, spans: sortSpans(spans), total: tokens.length };
}

/** By first token, then by term (the order a full scan term by term gives). */
function sortSpans(spans: [number, number, number][]): [number, number, number][] {
  return spans.sort((a, b) => a[0] - b[0] || a[2] - b[2]);
}

/**
 * A one-line excerpt of `text` around the first match of `terms` (pure): about `SNIPPET_TOKENS`
 * tokens, whitespace collapsed, `…` where it is cut, each match between `open` and `close`. The
 * matching mirrors the index's tokenizer (letters and digits, case and diacritics ignored). No
 * match found (the text changed since it was indexed) → the start of the text, unmarked.
 */
export function makeSnippet(text: string, terms: readonly QueryTerm[], open: string, close: string): string {
  const { tokens, spans, total } = scan(text, terms);
  if (tokens.length === 0) return "";
  const first = spans[0]?.[0] ?? 0;
  const from = Math.max(0, Math.min(first - Math.floor(SNIPPET_TOKENS / 4), total - SNIPPET_TOKENS));
  const to = Math.min(total - 1, Math.max(from + SNIPPET_TOKENS - 1, spans[0]?.[1] ?? 0));
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
  out += text.slice(at, to === total - 1 ? text.length : tokens[to]!.end);
  const head = from > 0 ? "…" : "";
  const tail = to < total - 1 ? "…" : "";
  return head + out.replace(/\s+/gu, " ").trim() + tail;
}

/** Marks the start and end of a matched span in `SearchHit.snippet`. */
export const HIGHLIGHT_START = "\u00ab";
export const HIGHLIGHT_END = "\u00bb";
