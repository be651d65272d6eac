/**
 * Word forms and code words (issue 34): what the index adds to a text so that a query word finds its
 * inflections and the parts of identifiers. Pure functions, shared by the index (what is stored), the
 * query (what is asked) and the snippet (what is marked).
 *
 * - Inflections: the stemmed table's tokenizer is FTS5's `porter` over `unicode61` ("crash" finds
 *   "crashes", "crashed", "crashing"); the snippet mirrors it loosely with `wordRoot`.
 * - Identifier parts: `unicode61` already splits `parse_statement` and `parse-statement` at the
 *   punctuation; a camelCase or PascalCase word (`parseStatement`, `HTTPServer`) is one token, so its
 *   parts are appended to the stemmed text (`identifierParts`) and a query word is asked as the phrase
 *   of its parts: "parseStatement" and "parse statement" find all four spellings.
 */

/** A token as FTS5's unicode61 keeps one (letters, digits, private use). */
const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu;
/** Where a compound word splits: lower→Upper, and before the last capital of a capital run (`HTTPServer`). */
const CAMEL_BOUNDARY = /(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u;
/** A quick test that a token may split at all (an upper case letter after its first character). */
const HAS_INNER_UPPER = /.\p{Lu}/u;

/** The parts of one token (`parseStatement` → parse, Statement); a token that does not split is its own part. */
export function splitIdentifier(token: string): string[] {
  if (!HAS_INNER_UPPER.test(token)) return [token];
  return token.split(CAMEL_BOUNDARY).filter((p) => p.length > 0);
}

/**
 * The parts of the compound words of `text`, each compound's parts on a line of their own (so that
 * "parse statement" as a phrase finds `parseStatement`); empty when no word of it splits.
 */
export function identifierParts(text: string): string {
  let out = "";
  for (const m of text.matchAll(TOKEN)) {
    const token = m[0];
    if (!HAS_INNER_UPPER.test(token)) continue;
    const parts = splitIdentifier(token);
    if (parts.length > 1) out += `${parts.join(" ")}\n`;
  }
  return out;
}

/** The text the stemmed table indexes: the text, then the parts of its compound words. */
export function stemmedText(text: string): string {
  const parts = identifierParts(text);
  return parts === "" ? text : `${text}\n${parts}`;
}

const SUFFIXES = ["ings", "ing", "edly", "ed", "ies", "es", "s", "ly", "ions", "ion", "ation", "e", "y"] as const;

/**
 * A word's root as the snippet compares it (lower-cased input): a few English suffixes removed, never
 * below three letters. Looser than Porter's stemmer, which the index uses: a snippet may mark a form
 * the index did not match, never miss one the index matched for the common inflections.
 */
export function wordRoot(word: string): string {
  let root = word;
  for (const suffix of SUFFIXES) {
    if (root.length - suffix.length >= 3 && root.endsWith(suffix)) {
      root = root.slice(0, -suffix.length);
      break;
    }
  }
  if (root.length > 3 && root.endsWith("i")) root = `${root.slice(0, -1)}y`;
  if (root.length > 3 && root.endsWith("e")) root = root.slice(0, -1);
  return root;
}
