import { TranscriptStoreError } from "../errors.ts";
import { splitIdentifier } from "./word-forms.ts";

/** One term of a query: a word, a word prefix (`word*`) or a phrase (`"two words"`). */
export type QueryTerm = { kind: "word"; text: string } | { kind: "prefix"; text: string } | { kind: "phrase"; text: string };

/** Longest query accepted, in characters. */
export const MAX_QUERY_CHARS = 1000;

function invalid(message: string): TranscriptStoreError {
  return new TranscriptStoreError("INVALID_QUERY", message);
}

/** True when `text` holds a letter or digit: what the index's tokenizer keeps. */
function hasToken(text: string): boolean {
  return /[\p{L}\p{N}]/u.test(text);
}

/**
 * Parses a search query (pure): whitespace-separated words, `"phrases"` and prefixes (`word*`);
 * every term must match (AND). `INVALID_QUERY` for an empty query, an unclosed quote, a `*` that
 * does not end a word, a NUL character, or terms with nothing to search (only punctuation).
 */
export function parseQuery(query: string): QueryTerm[] {
  if (typeof query !== "string") throw invalid("the query must be a string");
  if (query.length > MAX_QUERY_CHARS) throw invalid(`the query is longer than ${MAX_QUERY_CHARS} characters`);
  // SQLite's FTS5 cuts a query at a NUL ("unterminated string"); PostgreSQL refuses one: both say so alike.
  if (query.includes("\u0000")) throw invalid(`the query holds a NUL character (at column ${query.indexOf("\u0000") + 1})`);
  const terms: QueryTerm[] = [];
  let i = 0;
  while (i < query.length) {
    const c = query[i]!;
    if (/\s/u.test(c)) {
      i++;
      continue;
    }
    if (c === '"') {
      const end = query.indexOf('"', i + 1);
      if (end === -1) throw invalid(`unclosed quote at column ${i + 1}`);
      const text = query.slice(i + 1, end).trim();
      if (!hasToken(text)) throw invalid(`the phrase at column ${i + 1} has no word in it`);
      terms.push({ kind: "phrase", text });
      i = end + 1;
      continue;
    }
    let end = i;
    while (end < query.length && !/\s/u.test(query[end]!) && query[end] !== '"') end++;
    const word = query.slice(i, end);
    const star = word.indexOf("*");
    if (star !== -1 && star !== word.length - 1) throw invalid(`"*" must end a word (at column ${i + star + 1})`);
    const text = star === -1 ? word : word.slice(0, -1);
    if (!hasToken(text)) {
      if (star !== -1) throw invalid(`"*" needs a word before it (at column ${i + star + 1})`);
    } else terms.push(star === -1 ? { kind: "word", text } : { kind: "prefix", text });
    i = end;
  }
  if (terms.length === 0) throw invalid("the query has no word to search for");
  return terms;
}

/** An FTS5 string literal: every term is quoted, so no user text is read as FTS5 syntax. */
function quote(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/** A word or prefix as the phrase of its identifier parts (`parseStatement` → "parse Statement"). */
function partsOf(text: string): string {
  return text
    .split(/[^\p{L}\p{N}\p{Co}]+/u)
    .flatMap((w) => splitIdentifier(w))
    .filter((w) => w.length > 0)
    .join(" ");
}

/**
 * A word or prefix as FTS5 expression: the phrase of its tokens as written (what the text itself
 * holds: unicode61 splits the query as it split the text, so a token searched verbatim is always
 * found), or the phrase of its identifier parts (what the parts lines hold: "parseStatement" finds
 * `parse_statement`). The index adds parts per token (word-forms.ts), so a word joining tokens with
 * `_` or `-` whose parts split further (`ghp_wWPw5k…`) is found by the first phrase only.
 */
function wordMatch(text: string, star: string): string {
  const asWritten = `${quote(text)}${star}`;
  const parts = partsOf(text);
  return parts === text ? asWritten : `(${asWritten} OR ${quote(parts)}${star})`;
}

/**
 * The MATCH expression of a query for the stemmed table (pure): words and prefixes as written or as
 * the phrase of their identifier parts (wordMatch), every term inflected. A quoted phrase is matched
 * stemmed here and checked exact on the text read back (src/search/exact-forms.ts).
 */
export function toStemmedMatch(terms: readonly QueryTerm[]): string {
  return terms.map((t) => (t.kind === "phrase" ? quote(t.text) : wordMatch(t.text, t.kind === "prefix" ? "*" : ""))).join(" AND ");
}
