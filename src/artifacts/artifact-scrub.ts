import type { RedactionCounts, SecretRedactor } from "../prepare/redact-secrets.ts";
import type { ArtifactStore } from "./artifact-store.ts";
import { readGuarded } from "./artifact-files.ts";

export interface ScrubArtifactsReport {
  /** Artifacts and agent outputs in which something was found (rewritten unless a dry run). */
  changed: number;
  /** Files left unread: not regular files (a planted symlink) or not JSON though marked so. */
  skipped: number;
}

/**
 * Redacts what an artifacts directory already stores: text and JSON artifacts (byte artifacts are
 * kept as given) and agent outputs, each rewritten by temp file + rename (an artifact's metadata
 * first, with its new size and summary). `dryRun` only counts. `store` must have no redactor of its
 * own (its writes here are the already redacted text). Counts per rule go into `counts`.
 */
export function scrubArtifacts(
  store: ArtifactStore,
  redactor: SecretRedactor,
  counts: RedactionCounts,
  dryRun: boolean,
): ScrubArtifactsReport {
  const report: ScrubArtifactsReport = { changed: 0, skipped: 0 };
  for (const { meta, path } of store.storedArtifacts()) {
    if (meta.encoding === "bytes") continue;
    const bytes = readGuarded(path);
    if (bytes === null) continue;
    if (bytes === "unsafe") {
      report.skipped++;
      continue;
    }
    const found: RedactionCounts = new Map();
    let out: Buffer;
    let text: string;
    if (meta.encoding === "json") {
      let value: unknown;
      try {
        value = JSON.parse(bytes.toString("utf8"));
      } catch {
        report.skipped++;
        continue;
      }
      text = JSON.stringify(redactor.redactValue(value, found));
      out = Buffer.from(text, "utf8");
    } else {
      // latin1: every byte but the secrets' stays as it was, valid UTF-8 or not.
      const raw = bytes.toString("latin1");
      const redacted = redactor.redactText(raw, found);
      out = Buffer.from(redacted, "latin1");
      text = out.toString("utf8");
    }
    if (found.size === 0) continue;
    report.changed++;
    for (const [rule, n] of found) counts.set(rule, (counts.get(rule) ?? 0) + n);
    if (!dryRun) store.replaceContent(meta, out, text);
  }
  for (const id of store.listAgentOutputs()) {
    const markdown = store.getAgentOutput(id);
    if (markdown === null) continue;
    const found: RedactionCounts = new Map();
    const redacted = redactor.redactText(markdown, found);
    if (found.size === 0) continue;
    report.changed++;
    for (const [rule, n] of found) counts.set(rule, (counts.get(rule) ?? 0) + n);
    if (!dryRun) store.saveAgentOutput(id, redacted);
  }
  return report;
}
