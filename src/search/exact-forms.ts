import type { QueryTerm } from "./index-query.ts";

/** A token as FTS5's unicode61 keeps one (letters, digits, private use). */
const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu;
const MARKS = /\p{M}/gu;
const NON_ASCII = /[^\p{ASCII}]/u;

/** A token as unicode61 compares it: lower case, diacritics removed (ASCII: lower case alone). */
function fold(token: string): string {
  for (let i = 0; i < token.length; i++) if (token.charCodeAt(i) > 0x7f) return token.normalize("NFD").replace(MARKS, "").toLowerCase();
  return token.toLowerCase();
}

/**
 * True when `text` holds the words of `phrase` as written, one after the other (pure): each word
 * compared as FTS5's unicode61 compares tokens (case and diacritics folded, never stemmed), words
 * apart at anything that is no letter or digit. What keeps a quoted phrase exact in the file tree's
 * index, whose one table is stemmed: `"crashes"` holds in "it crashes", not in "a crash".
 */
export function holdsPhrase(text: string, phrase: string): boolean {
  const wanted = Array.from(phrase.matchAll(TOKEN), (m) => fold(m[0]));
  if (wanted.length === 0) return true;
  // a match starts at a token equal to the first word: nothing before the first place it appears
  let start = 0;
  // (only where the text is ASCII too: "ea" is how "Éa" folds, and lower-casing alone keeps its accent)
  if (/^[a-z0-9]+$/.test(wanted[0]!) && !NON_ASCII.test(text)) {
    start = text.toLowerCase().indexOf(wanted[0]!);
    if (start === -1) return false;
    while (start > 0 && /[\p{L}\p{N}\p{Co}\p{M}]/u.test(text[start - 1]!)) start--;
  }
  const token = new RegExp(TOKEN.source, "gu");
  token.lastIndex = start;
  const window: string[] = [];
  for (let m = token.exec(text); m !== null; m = token.exec(text)) {
    window.push(fold(m[0]));
    if (window.length > wanted.length) window.shift();
    if (window.length === wanted.length && window.every((w, i) => w === wanted[i])) return true;
  }
  return false;
}

/** True when `text` holds every quoted phrase of `terms` exactly (holdsPhrase); true when none is quoted. */
export function holdsExactForms(text: string, terms: readonly QueryTerm[]): boolean {
  return terms.every((t) => t.kind !== "phrase" || holdsPhrase(text, t.text));
}
