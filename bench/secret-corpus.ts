/**
 * The labelled secret corpus (test/fixtures/secrets/, PROVENANCE.md) run through the redactor:
 * per rule, recall on the positives and false positives on the code negatives and on the real
 * transcripts (every string of every entry). Used by `npm run secret-report`, the bench and
 * test/prepare/secret-detection.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { SecretRedactor, type RedactionCounts } from "../src/prepare/redact-secrets.ts";
import { BUILTIN_SECRET_RULES } from "../src/prepare/secret-rules.ts";

export const CORPUS_DIR = join(import.meta.dirname, "..", "test", "fixtures", "secrets");

/** Real code that must give no finding: this repository's own sources (identifiers, paths, expressions). */
export const REPO_CODE_DIRS: readonly string[] = [join(import.meta.dirname, "..", "src")];

export interface Positive {
  rule: string;
  text: string;
  source: string;
}

export interface Negative {
  kind: string;
  text: string;
  source: string;
}

export interface RuleStats {
  rule: string;
  positives: number;
  /** Positives of this rule that this rule redacted. */
  found: number;
  /** Positives of this rule that no rule redacted. */
  missed: string[];
  /** Negatives (code) this rule redacted something in. */
  codeFalsePositives: number;
  /** Lines of the repository's own source files this rule redacted something in. */
  repoFalsePositives: number;
  /** Entries of the real transcripts this rule redacted something in. */
  realFalsePositives: number;
}

export interface CorpusReport {
  rules: RuleStats[];
  codeNegatives: number;
  /** Source files of `REPO_CODE_DIRS` scanned, and their lines. */
  repoFiles: number;
  repoLines: number;
  realEntries: number;
  /** Real-transcript false positives, as `<file>:<line> <rule>` (never the text). */
  realHits: string[];
  codeHits: string[];
  /** The repository's own code: `<path>:<line> <rule>`. */
  repoHits: string[];
}

function readJsonl<T>(path: string): T[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}

export function readPositives(): Positive[] {
  return readJsonl<Positive>(join(CORPUS_DIR, "positives.jsonl"));
}

export function readCodeNegatives(): Negative[] {
  return readJsonl<Negative>(join(CORPUS_DIR, "negatives-code.jsonl"));
}

/** A redactor over the built-in rules with a fixed key (the corpus measures detection, not keys). */
export function corpusRedactor(): SecretRedactor {
  return new SecretRedactor(BUILTIN_SECRET_RULES, () => Buffer.alloc(32, 7));
}

/** Runs the corpus; `realDir` (the real transcripts) is optional: null skips that part. */
export function runCorpus(realDir: string | null): CorpusReport {
  const redactor = corpusRedactor();
  const stats = new Map<string, RuleStats>(
    BUILTIN_SECRET_RULES.map((r) => [
      r.id,
      { rule: r.id, positives: 0, found: 0, missed: [], codeFalsePositives: 0, repoFalsePositives: 0, realFalsePositives: 0 },
    ]),
  );
  for (const p of readPositives()) {
    const s = stats.get(p.rule);
    if (s === undefined) throw new Error(`positives.jsonl names an unknown rule ${p.rule}`);
    s.positives++;
    const counts: RedactionCounts = new Map();
    redactor.redactText(p.text, counts);
    if (counts.has(p.rule)) s.found++;
    else if (counts.size === 0) s.missed.push(p.text.slice(0, 60));
    else s.found++; // redacted, under a neighbouring rule: the secret does not reach disk
  }
  const codeHits: string[] = [];
  const negatives = readCodeNegatives();
  for (const n of negatives) {
    const counts: RedactionCounts = new Map();
    redactor.redactText(n.text, counts);
    for (const rule of counts.keys()) {
      stats.get(rule)!.codeFalsePositives++;
      codeHits.push(`${n.kind} ${rule}: ${n.text.slice(0, 80)}`);
    }
  }
  const repo = scanRepoCode(redactor, stats);
  const realHits: string[] = [];
  let realEntries = 0;
  if (realDir !== null) {
    for (const file of readdirSync(realDir).filter((f) => f.endsWith(".jsonl"))) {
      const lines = readFileSync(join(realDir, file), "utf8").split("\n");
      lines.forEach((line, i) => {
        if (line.trim() === "") return;
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          return;
        }
        realEntries++;
        const counts: RedactionCounts = new Map();
        redactor.redactValue(value, counts);
        for (const rule of counts.keys()) {
          stats.get(rule)!.realFalsePositives++;
          realHits.push(`${file}:${i + 1} ${rule}`);
        }
      });
    }
  }
  return { rules: [...stats.values()], codeNegatives: negatives.length, ...repo, realEntries, realHits, codeHits };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? filesUnder(join(dir, d.name)) : d.isFile() ? [join(dir, d.name)] : [],
  );
}

/** Each source file whole (a rule may span lines), each finding named by the line its marker lands on. */
function scanRepoCode(
  redactor: SecretRedactor,
  stats: Map<string, RuleStats>,
): { repoFiles: number; repoLines: number; repoHits: string[] } {
  const repoHits: string[] = [];
  let repoFiles = 0;
  let repoLines = 0;
  const root = join(import.meta.dirname, "..");
  for (const file of REPO_CODE_DIRS.flatMap(filesUnder)) {
    const text = readFileSync(file, "utf8");
    repoFiles++;
    repoLines += text.split("\n").length;
    const counts: RedactionCounts = new Map();
    const out = redactor.redactText(text, counts);
    if (counts.size === 0) continue;
    out.split("\n").forEach((line, i) => {
      for (const m of line.matchAll(/\[REDACTED:([a-z0-9-]+):[0-9a-f]{8}\]/g)) {
        const s = stats.get(m[1]!);
        if (s !== undefined) s.repoFalsePositives++;
        repoHits.push(`${relative(root, file)}:${i + 1} ${m[1]}`);
      }
    });
  }
  return { repoFiles, repoLines, repoHits };
}

/** The report as text lines (a table per rule, then the misses and hits). */
export function formatCorpusReport(report: CorpusReport): string[] {
  const lines = ["rule                        positives  recall   code-FP  repo-FP  real-FP"];
  for (const s of report.rules) {
    const recall = s.positives === 0 ? "—" : `${((s.found / s.positives) * 100).toFixed(0)}%`;
    const fp = [
      String(s.codeFalsePositives).padStart(8),
      String(s.repoFalsePositives).padStart(7),
      String(s.realFalsePositives).padStart(7),
    ].join("  ");
    lines.push(`${s.rule.padEnd(28)}${String(s.positives).padStart(9)}  ${recall.padStart(6)}  ${fp}`);
  }
  const positives = report.rules.reduce((a, s) => a + s.positives, 0);
  const found = report.rules.reduce((a, s) => a + s.found, 0);
  const fps = report.codeHits.length + report.repoHits.length + report.realHits.length;
  lines.push(`recall: ${found}/${positives} (${((found / positives) * 100).toFixed(1)}%); false positives: ${fps}`);
  lines.push(
    `code negatives: ${report.codeNegatives}; repository code: ${report.repoFiles} files, ${report.repoLines} lines; ` +
      `real transcript entries: ${report.realEntries}`,
  );
  for (const s of report.rules) for (const m of s.missed) lines.push(`missed (${s.rule}): ${m}`);
  for (const h of report.codeHits) lines.push(`false positive (code): ${h}`);
  for (const h of report.repoHits) lines.push(`false positive (repository code): ${h}`);
  for (const h of report.realHits) lines.push(`false positive (real): ${h}`);
  return lines;
}
