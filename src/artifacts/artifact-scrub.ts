import type { RedactionCounts, SecretRedactor } from "../prepare/redact-secrets.ts";
import type { ArtifactStore } from "./artifact-store.ts";
import { readGuarded } from "./artifact-files.ts";
import { redactLabels } from "./artifact-labels.ts";
import { summarize } from "./metadata.ts";

export interface ScrubArtifactsReport {
  /** Artifacts and agent outputs in which something was found (rewritten unless a dry run). */
  changed: number;
  /** Files left unread: not regular files (a planted symlink) or not JSON though marked so. */
  skipped: number;
}

/** A text or JSON artifact's content redacted: null when nothing was found; "skip" when JSON that does not parse. */
function redactContent(
  encoding: "text" | "json",
  bytes: Buffer,
  redactor: SecretRedactor,
  found: RedactionCounts,
): { out: Buffer; text: string } | null | "skip" {
  const before = found.size === 0 ? 0 : [...found.values()].reduce((a, n) => a + n, 0);
  let out: Buffer;
  let text: string;
  if (encoding === "json") {
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString("utf8"));
    } catch {
      return "skip";
    }
    text = JSON.stringify(redactor.redactValue(value, found));
    out = Buffer.from(text, "utf8");
  } else {
    // latin1: every byte but the secrets' stays as it was, valid UTF-8 or not.
    out = Buffer.from(redactor.redactText(bytes.toString("latin1"), found), "latin1");
    text = out.toString("utf8");
  }
  const after = [...found.values()].reduce((a, n) => a + n, 0);
  return after === before ? null : { out, text };
}

/**
 * Redacts what an artifacts directory already stores: text and JSON artifacts (byte artifacts'
 * content is kept as given), every artifact's summary and name, and agent outputs, each rewritten
 * by temp file + rename (an artifact's metadata first, with its new size and summary). `dryRun`
 * only counts. `store` must have no redactor of its own (its writes here are the already redacted
 * text). Counts per rule go into `counts`.
 */
export function scrubArtifacts(
  store: ArtifactStore,
  redactor: SecretRedactor,
  counts: RedactionCounts,
  dryRun: boolean,
): ScrubArtifactsReport {
  const report: ScrubArtifactsReport = { changed: 0, skipped: 0 };
  for (const { meta, path } of store.storedArtifacts()) {
    const found: RedactionCounts = new Map();
    let content: { out: Buffer; text: string } | null = null;
    // A summary read from the content (not given) is read again from the redacted content.
    let summaryGiven = true;
    if (meta.encoding !== "bytes") {
      const bytes = readGuarded(path);
      if (bytes === "unsafe") {
        report.skipped++;
        continue;
      }
      if (bytes !== null) {
        summaryGiven = meta.summary !== summarize(bytes.toString("utf8"));
        const redacted = redactContent(meta.encoding, bytes, redactor, found);
        if (redacted === "skip") {
          report.skipped++;
          continue;
        }
        content = redacted;
      }
    }
    const labelled = { ...meta };
    const relabelled = redactLabels(labelled, redactor, found, summaryGiven || content === null);
    if (content === null && !relabelled) continue;
    report.changed++;
    for (const [rule, n] of found) counts.set(rule, (counts.get(rule) ?? 0) + n);
    if (dryRun) continue;
    if (content !== null) store.replaceContent(labelled, content.out, content.text, summaryGiven);
    else store.replaceMeta(labelled);
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
