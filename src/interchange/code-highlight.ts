import { escapeHtml } from "./html-text.ts";

/**
 * A small code highlighter for the viewer: comments, strings, numbers and keywords of the languages
 * transcripts hold most (shell, JavaScript/TypeScript, Python, Go, Rust, JSON, C-like), each token
 * wrapped in a `<span class="hl-…">`. Every character of the input is escaped; nothing is executed
 * and nothing but those spans is added, so hostile code text stays text.
 */
const KEYWORDS = new Set(
  (
    "if else for while do return function const let var class extends import export from default new this " +
    "async await try catch finally throw switch case break continue typeof instanceof in of void yield " +
    "def lambda pass raise with as elif not and or is None True False self fn pub mut impl struct enum " +
    "trait use mod match loop where type interface package func go defer chan map range select " +
    "true false null undefined echo then fi done esac local export"
  ).split(" "),
);

/** One token rule: a sticky pattern and the class of what it matches (null: plain). */
const RULES: Array<{ pattern: RegExp; cls: string | null }> = [
  { pattern: /(?:\/\/|#)[^\n]*/y, cls: "comment" },
  { pattern: /\/\*[\s\S]*?(?:\*\/|$)/y, cls: "comment" },
  { pattern: /"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|`(?:[^`\\]|\\.)*`?/y, cls: "string" },
  { pattern: /\b(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:e[+-]?\d+)?)\b/y, cls: "number" },
  { pattern: /[A-Za-z_$][\w$]*/y, cls: "word" },
  { pattern: /\s+/y, cls: null },
  { pattern: /[^\sA-Za-z_$0-9"'`/#]+|[/#]/y, cls: null },
];

/** Languages whose `#` does not start a comment (there it is an operator or a selector). */
const HASH_IS_CODE = new Set(["c", "cpp", "c++", "rust", "rs", "css", "js", "javascript", "ts", "typescript", "jsx", "tsx", "go"]);

/** `code` as escaped HTML with highlight spans; `language` is the fence's info word (may be empty). */
export function highlightCode(code: string, language: string): string {
  const lang = language.toLowerCase();
  if (code.length > 200_000 || lang === "text" || lang === "plain") return escapeHtml(code);
  let out = "";
  let at = 0;
  while (at < code.length) {
    let matched = false;
    for (const rule of RULES) {
      rule.pattern.lastIndex = at;
      const m = rule.pattern.exec(code);
      if (m === null || m[0].length === 0) continue;
      let text = m[0];
      let cls = rule.cls;
      if (cls === "comment" && text.startsWith("#") && HASH_IS_CODE.has(lang)) {
        text = "#";
        cls = null;
      }
      if (cls === "word") cls = KEYWORDS.has(text) ? "keyword" : null;
      out += cls === null ? escapeHtml(text) : `<span class="hl-${cls}">${escapeHtml(text)}</span>`;
      at += text.length;
      matched = true;
      break;
    }
    if (!matched) {
      out += escapeHtml(code[at]!);
      at++;
    }
  }
  return out;
}
