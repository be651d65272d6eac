/**
 * The detection report of the secret redaction stage: per rule, recall on the labelled positives
 * and false positives on code and on the real transcripts (`../shared/real-sessions`, or
 * `$TRANSCRIPT_STORE_SHARED/real-sessions`; skipped with a note when absent).
 * Usage: npm run secret-report
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { formatCorpusReport, runCorpus } from "../bench/secret-corpus.ts";

const base = process.env.TRANSCRIPT_STORE_SHARED ?? join(import.meta.dirname, "..", "..", "shared");
const real = join(base, "real-sessions");
const present = existsSync(real);
const lines = formatCorpusReport(runCorpus(present ? real : null));
if (!present) lines.push(`real transcripts not found at ${real}: their false positives were not measured`);
process.stdout.write(`${lines.join("\n")}\n`);
