import type { RedactionCounts, SecretRedactor } from "../../src/prepare/redact-secrets.ts";
import type { SecretRule } from "../../src/prepare/secret-rules.ts";

/**
 * The redaction as it was before one keyword scan drove it (issue 38 #7): every rule one of whose
 * keywords occurs in the text (any case; a rule without keywords always) runs its global regex
 * over the whole text, in rule order, each on the text the one before left. The reference the
 * redactor must equal, match for match.
 */
export function redactTextPerRule(redactor: SecretRedactor, text: string, counts: RedactionCounts): string {
  const lower = text.toLowerCase();
  const selected = redactor.rules.filter(
    (r) => r.keywords === undefined || r.keywords.length === 0 || r.keywords.some((k) => lower.includes(k.toLowerCase())),
  );
  let out = text;
  for (const rule of selected) out = applyRule(redactor, rule, out, counts);
  return out;
}

function applyRule(redactor: SecretRedactor, rule: SecretRule, text: string, counts: RedactionCounts): string {
  rule.pattern.lastIndex = 0;
  return text.replace(rule.pattern, (match: string, ...rest: unknown[]) => {
    let group: string | undefined;
    for (const g of rest) {
      if (typeof g === "number") break;
      if (typeof g === "string") {
        group = g;
        break;
      }
    }
    const secret = group ?? match;
    if (secret.length === 0 || secret.startsWith("[REDACTED:")) return match;
    if (rule.check !== undefined && !rule.check(secret, match)) return match;
    counts.set(rule.id, (counts.get(rule.id) ?? 0) + 1);
    const marker = redactor.marker(rule.id, secret);
    if (group === undefined) return marker;
    const at = match.lastIndexOf(secret);
    return match.slice(0, at) + marker + match.slice(at + secret.length);
  });
}
