import { createHmac } from "node:crypto";
import { TranscriptStoreError } from "../errors.ts";
import { isBlobRef } from "../blob/blob-ref.ts";
import type { SessionEntry } from "../format/types.ts";
import { payloadKindAt } from "./image-shapes.ts";
import { DESCEND, mapTree } from "./map-tree.ts";
import type { PrepareStage } from "./pipeline.ts";
import { type ReplaceMatch, RuleScan } from "./rule-scan.ts";
import { BUILTIN_SECRET_RULES, type SecretRule } from "./secret-rules.ts";
import { SIGNATURE_KEYS } from "./truncate-strings.ts";

/** A rule given by the user: `pattern` a RegExp or its source (compiled with `g`). */
export interface SecretRuleOptions {
  id: string;
  pattern: RegExp | string;
  /** Substrings one of which every match contains (searched before the regex, in any letter case). */
  keywords?: readonly string[];
}

/** `"secrets"`: the built-in rules; an object adds user rules (and may leave the built-in ones out). */
export type RedactOption = "secrets" | { rules?: readonly SecretRuleOptions[]; builtin?: boolean };

/** Rules found in one text or entry: rule id → how many secrets it replaced. */
export type RedactionCounts = Map<string, number>;

/** Every marker starts with this; a marker is never matched again. */
export const REDACTION_MARKER_PREFIX = "[REDACTED:";

const RULE_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** Validates the `redact` option into the rules to run (built-in first, then the user's). */
export function resolveRedactRules(option: RedactOption): readonly SecretRule[] {
  if (option === "secrets") return BUILTIN_SECRET_RULES;
  if (typeof option !== "object" || option === null) {
    throw new TranscriptStoreError("INVALID_OPTION", `redact must be "secrets" or { rules, builtin }, got ${String(option)}`);
  }
  const given = option.rules ?? [];
  if (!Array.isArray(given)) throw new TranscriptStoreError("INVALID_OPTION", "redact.rules must be an array");
  const user = given.map(compileUserRule);
  const ids = new Set<string>();
  const rules = [...(option.builtin === false ? [] : BUILTIN_SECRET_RULES), ...user];
  for (const rule of rules) {
    if (ids.has(rule.id)) throw new TranscriptStoreError("INVALID_OPTION", `redact rule id ${rule.id} is given twice`);
    ids.add(rule.id);
  }
  return rules;
}

function compileUserRule(rule: SecretRuleOptions, i: number): SecretRule {
  if (typeof rule !== "object" || rule === null) throw new TranscriptStoreError("INVALID_OPTION", `redact.rules[${i}] must be an object`);
  if (typeof rule.id !== "string" || !RULE_ID.test(rule.id)) {
    throw new TranscriptStoreError("INVALID_OPTION", `redact.rules[${i}].id must be lowercase letters, digits and -`);
  }
  let pattern: RegExp;
  try {
    if (rule.pattern instanceof RegExp)
      pattern = new RegExp(rule.pattern.source, rule.pattern.flags.includes("g") ? rule.pattern.flags : `${rule.pattern.flags}g`);
    else if (typeof rule.pattern === "string" && rule.pattern.length > 0) pattern = new RegExp(rule.pattern, "g");
    else throw new TypeError("pattern must be a RegExp or a non-empty string");
  } catch (err) {
    throw new TranscriptStoreError("INVALID_OPTION", `redact.rules[${i}].pattern: ${(err as Error).message}`, { cause: err });
  }
  if (rule.keywords !== undefined && (!Array.isArray(rule.keywords) || rule.keywords.some((k) => typeof k !== "string" || k === ""))) {
    throw new TranscriptStoreError("INVALID_OPTION", `redact.rules[${i}].keywords must be an array of non-empty strings`);
  }
  return { id: rule.id, pattern, ...(rule.keywords === undefined ? {} : { keywords: [...rule.keywords] }) };
}

/**
 * A format's own say about one string of a value being redacted (`redactValue`): the string to put
 * there (itself to keep it), or `undefined` for the usual rules.
 */
export type OwnStrings = (text: string, key: string | null, parent: Record<string, unknown> | null) => string | undefined;

/** Replaces secrets by markers `[REDACTED:<rule>:<hash>]`; the hash is a keyed HMAC, so equal secrets give equal markers. */
export class SecretRedactor {
  readonly rules: readonly SecretRule[];
  private readonly key: () => Uint8Array;
  /** The rules and the one keyword scan (an automaton) that selects them and where they are tried. */
  private readonly scan: RuleScan;
  /** Replaces one match of one rule, counting into `this.counting`. */
  private readonly replaceMatch: ReplaceMatch;
  private counting: RedactionCounts = new Map();

  /** `key` is asked for only when a secret is found (a store creates its key on first use). */
  constructor(rules: readonly SecretRule[], key: () => Uint8Array) {
    this.rules = rules;
    this.key = key;
    this.scan = new RuleScan(rules);
    this.replaceMatch = (rule, match, group) => {
      const secret = group ?? match;
      if (secret.length === 0 || secret.startsWith(REDACTION_MARKER_PREFIX)) return match;
      if (rule.check !== undefined && !rule.check(secret, match)) return match;
      this.counting.set(rule.id, (this.counting.get(rule.id) ?? 0) + 1);
      const marker = this.marker(rule.id, secret);
      if (group === undefined) return marker;
      const at = match.lastIndexOf(secret);
      return match.slice(0, at) + marker + match.slice(at + secret.length);
    };
  }

  /** False when `text` proves no rule can match (none of the keywords occurs, in any case). */
  mayMatch(text: string): boolean {
    return this.scan.mayMatch(text);
  }

  /**
   * `mayMatch` for a serialized entry: keywords that only occur in the keys of numbers, objects and
   * the like (`"totalTokens":12`) are no reason to look; a key holding a string is (its name may say
   * the string is a secret). A keyword is in a key when the next quote after it (not escaped) is
   * followed by `:`; in doubt (an escaped quote) it counts.
   */
  mayMatchJson(line: string): boolean {
    const keywords = this.scan.keywords;
    if (keywords === null) return true;
    const kw = this.scan.keywordTexts;
    return keywords.scan(line, (start, k) => {
      const quote = line.indexOf('"', start + kw[k]!.length);
      if (quote === -1 || line.charCodeAt(quote + 1) !== 0x3a || line.charCodeAt(quote - 1) === 0x5c) return true;
      // A key that names a secret (`AWS_SECRET_ACCESS_KEY: "…"` in JSON) is a reason to look at its string value.
      return line.charCodeAt(quote + 2) === 0x22;
    });
  }

  /** The marker of `secret` under `rule`. */
  marker(rule: string, secret: string): string {
    const hash = createHmac("sha256", this.key()).update(secret, "utf8").digest("hex").slice(0, 8);
    return `${REDACTION_MARKER_PREFIX}${rule}:${hash}]`;
  }

  /** `text` with every secret replaced (the same string when none), counting into `counts`. */
  redactText(text: string, counts: RedactionCounts): string {
    const outer = this.counting;
    this.counting = counts;
    try {
      // One keyword scan picks the rules and where each is tried.
      return this.scan.apply(text, this.replaceMatch);
    } finally {
      this.counting = outer;
    }
  }

  /**
   * `value` (any JSON value) with the secrets in its strings replaced: never an object key, a blob
   * ref, an image payload or a provider signature. Ids (`id`, `toolCallId`, …) are strings like
   * any other: a structural id never looks like a secret, and one that holds a secret gets the
   * secret's marker wherever it is, so links between entries hold. A string under a key that names
   * a secret (`AWS_SECRET_ACCESS_KEY: "…"`) is read with its key, as `"<key>": <value>` in JSON
   * text would be. The same object when nothing was found; the input is never mutated. `own` (a
   * format's own payloads, e.g. an agent's transcript records) is asked first about each string:
   * what it returns is used, `undefined` goes on.
   */
  redactValue<T>(value: T, counts: RedactionCounts, own?: OwnStrings): T {
    return mapTree(value, {
      visit: (child, key, parent, where) => {
        if (typeof child !== "string") return DESCEND;
        const mine = own?.(child, key, parent);
        if (mine !== undefined) return mine;
        // A provider's signature sits in a typed block (thinking, reasoning); a tool's own `signature` argument is content.
        if (key !== null && SIGNATURE_KEYS.has(key) && typeof parent?.type === "string") return child;
        if (isBlobRef(child)) return child;
        if (parent !== null && payloadKindAt(parent, key!, where) !== null) return child;
        if (key !== null && this.mayName(key)) {
          const named = this.redactNamed(key, child, counts);
          if (named !== undefined) return named;
        }
        return this.redactString(child, counts, own);
      },
    });
  }

  /** Keys seen → whether a keyword occurs in them (keys repeat: `type`, `text`, `content`…); bounded. */
  private readonly keyNames = new Map<string, boolean>();

  /** True when a keyword occurs in `key` (remembered per key). */
  private mayName(key: string): boolean {
    let known = this.keyNames.get(key);
    if (known === undefined) {
      if (this.keyNames.size >= 4096) this.keyNames.clear();
      known = this.mayMatch(key);
      this.keyNames.set(key, known);
    }
    return known;
  }

  /**
   * A string under a key that may name a secret, read as `"<key>": <value>`: the value redacted
   * when a rule fires on it in that context; `undefined` when none did (or a JSON value, which
   * `redactString` walks).
   */
  private redactNamed(key: string, text: string, counts: RedactionCounts): string | undefined {
    const first = text.trimStart()[0];
    if (first === "{" || first === "[") return undefined;
    const prefix = `"${key}": `;
    const found: RedactionCounts = new Map();
    const out = this.redactText(prefix + text, found);
    if (found.size === 0 || !out.startsWith(prefix)) return undefined;
    for (const [rule, n] of found) counts.set(rule, (counts.get(rule) ?? 0) + n);
    return out.slice(prefix.length);
  }

  /**
   * One string of a value. A string holding JSON (a tool call's `arguments`, as Codex and OpenAI
   * write them) stays JSON: when replacing in its text would break it (a secret running into an
   * escaped quote), its JSON value is redacted instead and written back compact.
   */
  private redactString(text: string, counts: RedactionCounts, own: OwnStrings | undefined): string {
    const first = text.trimStart()[0];
    if (first !== "{" && first !== "[") return this.redactText(text, counts);
    const found: RedactionCounts = new Map();
    let out = this.redactText(text, found);
    if (out !== text && jsonOf(out) === NOT_JSON) {
      const value = jsonOf(text);
      if (value !== NOT_JSON) {
        found.clear();
        out = JSON.stringify(this.redactValue(value, found, own));
      }
    }
    for (const [rule, n] of found) counts.set(rule, (counts.get(rule) ?? 0) + n);
    return out;
  }
}

const NOT_JSON: unique symbol = Symbol("not JSON");

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

/** Summary of counts for a warning: `github-token×2, jwt×1` (rule ids and numbers only, never a secret). */
export function describeCounts(counts: RedactionCounts): string {
  return [...counts].map(([rule, n]) => `${rule}×${n}`).join(", ");
}

/**
 * The redaction prepare stage: each entry's strings through `redactor`; `report` is called once per
 * entry in which something was redacted. Its `needed` check is the redactor's keyword prefilter.
 */
export function redactSecretsStage(redactor: SecretRedactor, report: (entry: SessionEntry, counts: RedactionCounts) => void): PrepareStage {
  const stage = (entry: SessionEntry): SessionEntry => {
    const counts: RedactionCounts = new Map();
    const out = redactor.redactValue(entry, counts);
    if (counts.size > 0) report(entry, counts);
    return out;
  };
  return Object.assign(stage, { needed: (line: string) => redactor.mayMatchJson(line) });
}
