import type { RedactionCounts, SecretRedactor } from "../prepare/redact-secrets.ts";
import type { ArtifactMeta } from "./metadata.ts";

/**
 * Redacts an artifact's labels in place: its `summary` and `name` (text a caller gave, or read
 * from the content) are stored and shown like the content, so a secret in them becomes its
 * marker too. True when something was replaced (counted into `counts`). `summary: false` leaves
 * the summary to be read again from the redacted content (a copy of it: no second count).
 */
export function redactLabels(meta: ArtifactMeta, redactor: SecretRedactor, counts: RedactionCounts, summary = true): boolean {
  let changed = false;
  if (summary && meta.summary !== undefined) {
    const redacted = redactor.redactText(meta.summary, counts);
    changed ||= redacted !== meta.summary;
    meta.summary = redacted;
  }
  if (meta.name !== undefined) {
    const name = redactor.redactText(meta.name, counts);
    changed ||= name !== meta.name;
    meta.name = name;
  }
  return changed;
}
