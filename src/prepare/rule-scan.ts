import { keywordScanner, type KeywordScanner } from "./keyword-scan.ts";
import type { SecretRule } from "./secret-rules.ts";

/**
 * What one rule's match becomes: the replacement text (the match itself to keep it). `group` is
 * the first capture group that took part, when any.
 */
export type ReplaceMatch = (rule: SecretRule, match: string, group: string | undefined) => string;

/**
 * The rules of a redactor and the one keyword scan that selects them. A scan of a text gives, per
 * rule, where its keywords start; a rule with no keyword there cannot match. A rule that says how
 * far before its first keyword a match may start (`back`) is then tried only at those starts (a
 * sticky regex per candidate), never over the whole text: the result is the one its global regex
 * would give, match for match (test/prepare/redact-equivalence.test.ts).
 */
export class RuleScan {
  readonly rules: readonly SecretRule[];
  /** Null when a rule has no keywords: every rule then runs over every text, as a global regex. */
  private readonly scanner: KeywordScanner | null;
  /** Keyword index → the indexes of the rules it selects. */
  private readonly rulesOf: number[][];
  /** Keyword index → the keyword, lowercased. */
  readonly keywordTexts: readonly string[];
  /** Per rule, its regex made sticky (tried at one position), when the rule has `back`. */
  private readonly sticky: Array<RegExp | null>;

  constructor(rules: readonly SecretRule[]) {
    this.rules = rules;
    const index = new Map<string, number>();
    this.rulesOf = [];
    rules.forEach((rule, i) => {
      for (const k of rule.keywords ?? []) {
        const lower = k.toLowerCase();
        let at = index.get(lower);
        if (at === undefined) {
          at = index.size;
          index.set(lower, at);
          this.rulesOf.push([]);
        }
        if (!this.rulesOf[at]!.includes(i)) this.rulesOf[at]!.push(i);
      }
    });
    const open = rules.some((r) => r.keywords === undefined || r.keywords.length === 0);
    this.keywordTexts = [...index.keys()];
    this.scanner = open ? null : keywordScanner(this.keywordTexts);
    this.sticky = rules.map((r) =>
      r.back === undefined || open ? null : new RegExp(r.pattern.source, `${r.pattern.flags.replace("g", "")}y`),
    );
  }

  /** False when `text` proves no rule can match (none of the keywords occurs, in any case). */
  mayMatch(text: string): boolean {
    return this.scanner === null || this.scanner.test(text);
  }

  /** The keyword scan for `mayMatchJson` (null: every text may match). */
  get keywords(): KeywordScanner | null {
    return this.scanner;
  }

  /** Per rule, the sorted starts of its keywords in `text` (undefined: none); null when no keyword occurs. */
  private startsIn(text: string): Array<number[] | undefined> | null {
    const starts: Array<number[] | undefined> = [];
    let any = false;
    this.scanner!.scan(text, (start, keyword) => {
      any = true;
      for (const rule of this.rulesOf[keyword]!) {
        const list = starts[rule];
        if (list === undefined) starts[rule] = [start];
        else if (list[list.length - 1]! <= start) {
          if (list[list.length - 1] !== start) list.push(start);
        } else if (!list.includes(start)) {
          list.push(start);
          list.sort((a, b) => a - b);
        }
      }
      return false;
    });
    return any ? starts : null;
  }

  /** `text` through every rule that may match it, in rule order, each match replaced by `replace`. */
  apply(text: string, replace: ReplaceMatch): string {
    if (this.scanner === null) return this.rules.reduce((out, rule) => replaceAll(rule, out, replace), text);
    const selected = this.startsIn(text);
    if (selected === null) return text;
    let out = text;
    let starts = selected;
    for (let i = 0; i < this.rules.length; i++) {
      if (selected[i] === undefined) continue;
      const rule = this.rules[i]!;
      const sticky = this.sticky[i]!;
      const before = out;
      if (sticky === null) out = replaceAll(rule, out, replace);
      else {
        const at = starts[i];
        if (at !== undefined) out = replaceAt(rule, sticky, out, at, replace);
      }
      // A replacement moves what follows: the next rules look at the new text's keywords.
      if (out !== before) starts = this.startsIn(out) ?? [];
    }
    return out;
  }
}

/** The first capture group that took part in an exec or replace match, else undefined. */
function firstGroup(groups: readonly unknown[]): string | undefined {
  for (const g of groups) {
    if (typeof g === "number") return undefined;
    if (typeof g === "string") return g;
  }
  return undefined;
}

/** The rule's global regex over the whole text. */
function replaceAll(rule: SecretRule, text: string, replace: ReplaceMatch): string {
  rule.pattern.lastIndex = 0;
  return text.replace(rule.pattern, (match: string, ...rest: unknown[]) => replace(rule, match, firstGroup(rest)));
}

/**
 * What `replaceAll` gives, trying the sticky regex only at the starts a match can have: at most
 * `rule.back` characters before one of the keyword starts `at` (sorted), leftmost first, each
 * start once, never inside a match already taken (a global regex goes on after its match).
 */
function replaceAt(rule: SecretRule, sticky: RegExp, text: string, at: readonly number[], replace: ReplaceMatch): string {
  const back = rule.back!;
  let out = "";
  let copied = 0;
  let next = 0; // the first start not yet tried, and never inside a match
  for (const keyword of at) {
    if (keyword < next) continue;
    for (let p = Math.max(next, keyword - back); p <= keyword; p = Math.max(p + 1, next)) {
      sticky.lastIndex = p;
      const m = sticky.exec(text);
      if (m === null || m[0].length === 0) continue;
      out += text.slice(copied, p) + replace(rule, m[0], firstGroup(m.slice(1)));
      copied = p + m[0].length;
      next = copied;
    }
    next = Math.max(next, keyword + 1);
  }
  return copied === 0 ? text : out + text.slice(copied);
}
