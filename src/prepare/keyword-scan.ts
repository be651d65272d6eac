/**
 * One pass over a text finds every occurrence of every keyword, in any letter case: one regex
 * whose alternation is the keywords' trie (`s(?:ecret|k_…)`), which the regex engine compiles to
 * native code (a combined automaton) and runs once over the text. The secret rules'
 * keywords go in; the redactor learns from one scan which rules can match and where
 * (`rule-scan.ts`), instead of one regex pass per rule.
 */
export interface KeywordScanner {
  /** The keywords, lowercased and distinct, by index. */
  readonly keywords: readonly string[];
  /**
   * Calls `hit(start, keyword)` for every occurrence (overlapping ones and a keyword inside
   * another too), by start; `hit` returning true stops the scan. True when it was stopped.
   */
  scan(text: string, hit: (start: number, keyword: number) => boolean | undefined): boolean;
  /** True when some keyword occurs in `text`. */
  test(text: string): boolean;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The alternation of `words` as a trie, longest alternative first at every node. */
function trie(words: readonly string[]): string {
  const byFirst = new Map<string, string[]>();
  let ends = false;
  for (const w of words) {
    if (w === "") ends = true;
    else byFirst.set(w[0]!, [...(byFirst.get(w[0]!) ?? []), w.slice(1)]);
  }
  const alternatives = [...byFirst].map(([c, rest]) => {
    if (rest.length === 1) return escapeRegExp(c + rest[0]!);
    return `${escapeRegExp(c)}(?:${trie(rest)})`;
  });
  if (ends) alternatives.push("");
  return alternatives.join("|");
}

/** A scanner over `keywords` (distinct; compared lowercased). */
export function keywordScanner(keywords: readonly string[]): KeywordScanner {
  const lower = keywords.map((k) => k.toLowerCase());
  // A hit is the longest keyword at its start; the shorter keywords it starts with are there too.
  const within = new Map(lower.map((k) => [k, lower.flatMap((short, i) => (k.startsWith(short) ? [i] : []))]));
  const search = new RegExp(trie(lower), "gi");
  const scan = (text: string, hit: (start: number, keyword: number) => boolean | undefined): boolean => {
    search.lastIndex = 0;
    for (let m = search.exec(text); m !== null; m = search.exec(text)) {
      for (const k of within.get(m[0].toLowerCase()) ?? []) if (hit(m.index, k) === true) return true;
      search.lastIndex = m.index + 1;
    }
    return false;
  };
  return { keywords: lower, scan, test: (text) => scan(text, () => true) };
}
