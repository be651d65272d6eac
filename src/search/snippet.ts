import type { QueryTerm } from "./index-query.ts";
import { splitIdentifier, wordRoot } from "./word-forms.ts";

/** Tokens a snippet shows (the matches and their context). @default 24 */
export const SNIPPET_TOKENS = 24;

interface Token {
  start: number;
  end: number;
  norm: string;
  /** The token's identifier parts, normalized (null: it does not split). */
  parts: string[] | null;
}

/** One term as the snippet matches it: its tokens (identifier parts), compared by root unless quoted. */
interface Pattern {
  tokens: string[];
  prefix: boolean;
  exact: boolean;
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

function tokenOf(word: string, start: number): Token {
  const parts = splitIdentifier(word);
  return { start, end: start + word.length, norm: normalizeToken(word), parts: parts.length > 1 ? parts.map(normalizeToken) : null };
}

/**
 * The token sequences each term may match, as the index matches it (index-query.ts, wordMatch): a
 * quoted phrase as written; a word as written or as its identifier parts (`ghp_wWPw5k…` as written
 * only: its parts split further than the text's tokens do).
 */
function termPatterns(terms: readonly QueryTerm[]): Pattern[] {
  return terms
    .flatMap((t) => {
      const words = Array.from(t.text.matchAll(TOKEN), (m) => m[0]);
      const asWritten = { tokens: words.map(normalize), prefix: t.kind === "prefix", exact: t.kind === "phrase" };
      if (t.kind === "phrase") return [asWritten];
      const parts = words.flatMap((w) => splitIdentifier(w));
      return parts.length === words.length ? [asWritten] : [asWritten, { ...asWritten, tokens: parts.map(normalize) }];
    })
    .filter((p) => p.tokens.length > 0);
}

/** True when `word` (a token or part) is the pattern's `k`-th token: the same root, or as written for a quoted phrase. */
function same(word: string, pattern: Pattern, k: number): boolean {
  const wanted = pattern.tokens[k]!;
  if (k === pattern.tokens.length - 1 && pattern.prefix) return word.startsWith(wanted) || wordRoot(word).startsWith(wordRoot(wanted));
  return pattern.exact ? word === wanted : word === wanted || wordRoot(word) === wordRoot(wanted);
}

/** True when a term of several words matches the parts of one compound token (`parseStatement`). */
function matchesParts(token: Token, pattern: Pattern): boolean {
  const parts = token.parts;
  if (pattern.exact || parts === null || pattern.tokens.length < 2) return false;
  for (let from = 0; from + pattern.tokens.length <= parts.length; from++)
    if (pattern.tokens.every((_, k) => same(parts[from + k]!, pattern, k))) return true;
  return false;
}

/** True when `pattern` matches the tokens from index `at`. */
function matchesAt(tokens: Token[], at: number, pattern: Pattern): boolean {
  for (let k = 0; k < pattern.tokens.length; k++) {
    const token = tokens[at + k]!;
    if (same(token.norm, pattern, k)) continue;
    // a single-word term also matches a part of a compound token (`parse` in `parseStatement`)
    if (pattern.tokens.length === 1 && token.parts?.some((p) => same(p, pattern, k))) continue;
    return false;
  }
  return true;
}

/**
 * The text's tokens up to what the snippet needs, and every match among them as [first, last, term].
 * Tokenizing starts a little before the first place a term could match (scanStart) and stops a
 * window past the first match (a hit's text can be megabytes; its snippet needs a few dozen tokens),
 * or after MAX_SCAN_TOKENS without one: `total` is then unknown (Infinity), and larger than any index used.
 */
function scan(
  text: string,
  terms: readonly QueryTerm[],
): { tokens: Token[]; spans: [number, number, number][]; total: number; skipped: boolean } {
  const patterns = termPatterns(terms);
  const longest = Math.max(1, ...patterns.map((p) => p.tokens.length));
  const tokens: Token[] = [];
  const spans: [number, number, number][] = [];
  let needed = Number.POSITIVE_INFINITY;
  const start = scanStart(text, patterns);
  const skipped = start > 0;
  const token = new RegExp(TOKEN.source, "gu");
  token.lastIndex = start;
  for (let m = token.exec(text); m !== null; m = token.exec(text)) {
    if (tokens.length >= needed || (needed === Number.POSITIVE_INFINITY && tokens.length >= MAX_SCAN_TOKENS))
      return { tokens, spans: sortSpans(spans), total: Number.POSITIVE_INFINITY, skipped };
    tokens.push(tokenOf(m[0], m.index));
    const i = tokens.length - 1;
    patterns.forEach((pattern, p) => {
      if (matchesParts(tokens[i]!, pattern)) spans.push([i, i, p]);
      const at = i - pattern.tokens.length + 1;
      if (at >= 0 && matchesAt(tokens, at, pattern)) spans.push([at, i, p]);
    });
    // the first match found starts at most `longest - 1` tokens after the earliest one: enough tokens
    // to settle the earliest, then the window after it, then one more to know whether the text goes on
    if (needed === Number.POSITIVE_INFINITY && spans.length > 0) {
      needed = Math.max(0, spans[0]![0] - Math.floor(SNIPPET_TOKENS / 4)) + SNIPPET_TOKENS + longest + 1;
    }
  }
  return { tokens, spans: sortSpans(spans), total: tokens.length, skipped };
}

/** Tokens a snippet reads looking for a first match before it gives up (then: the start of what it read). @default 50000 */
export const MAX_SCAN_TOKENS = 50_000;

/**
 * Where tokenizing may start (pure): a little before the first place any term could match. Every
 * match holds its first word's root but its last letter (a root is the head of every form it
 * matches, but for a final `y` standing for `i`; a compound holds its parts), so no match lies
 * before the first of them, found by a plain search of the lower-cased text: a hit
 * in a megabyte of build log is not tokenized from its top. 0 for a term that is not ASCII (case
 * and diacritics folding would not find it so) or no such place.
 */
function scanStart(text: string, patterns: readonly Pattern[]): number {
  if (text.length < 4096 || patterns.length === 0) return 0;
  const lower = text.toLowerCase();
  let first = Number.POSITIVE_INFINITY;
  for (const pattern of patterns) {
    const word = pattern.tokens[0]!;
    const root = pattern.exact ? word : wordRoot(word);
    const needle = root.slice(0, Math.max(3, root.length - 1));
    if (!/^[a-z0-9]+$/.test(needle)) return 0;
    const at = lower.indexOf(needle);
    if (at !== -1 && at < first) first = at;
  }
  if (!Number.isFinite(first)) return 0;
  // back a few hundred characters (the window's lead), then to the start of a token
  let start = Math.max(0, first - 400);
  while (start > 0 && /[\p{L}\p{N}\p{Co}\p{M}]/u.test(text[start - 1]!)) start--;
  return start;
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
  const { tokens, spans, total, skipped } = scan(text, terms);
  if (tokens.length === 0) return "";
  const first = spans[0]?.[0] ?? 0;
  const from = Math.max(0, Math.min(first - Math.floor(SNIPPET_TOKENS / 4), total - SNIPPET_TOKENS));
  const to = Math.min(total - 1, Math.max(from + SNIPPET_TOKENS - 1, spans[0]?.[1] ?? 0));
  let out = "";
  let at = from === 0 && !skipped ? 0 : tokens[from]!.start;
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
  const head = from > 0 || skipped ? "…" : "";
  const tail = to < total - 1 ? "…" : "";
  return head + out.replace(/\s+/gu, " ").trim() + tail;
}

/** Marks the start and end of a matched span in `SearchHit.snippet`. */
export const HIGHLIGHT_START = "\u00ab";
export const HIGHLIGHT_END = "\u00bb";
