import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "../../src/session/session-manager.ts";
import { median } from "../stats.ts";
import { agentMessage, prng } from "../workload.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { runCorpus } from "../secret-corpus.ts";

/** The real transcripts beside the repository (`../shared/real-sessions`), else null. */
function realDir(): string | null {
  const base = process.env.TRANSCRIPT_STORE_SHARED ?? join(import.meta.dirname, "..", "..", "..", "shared");
  const dir = join(base, "real-sessions");
  return existsSync(dir) ? dir : null;
}

/** The messages of the real transcripts (their text as agents wrote it); the synthetic workload when absent. */
function workload(dir: string | null): Array<{ role: string }> {
  const out: Array<{ role: string }> = [];
  if (dir !== null) {
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".jsonl"))) {
      for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
        if (line.trim() === "") continue;
        try {
          const entry = JSON.parse(line) as { type?: string; message?: { role?: unknown } };
          if (entry.type === "message" && typeof entry.message?.role === "string") out.push(entry.message as { role: string });
        } catch {
          // a damaged line is no workload
        }
      }
    }
  }
  if (out.length > 0) return out;
  const random = prng(26);
  return Array.from({ length: 500 }, (_, i) => agentMessage(random, i, 2048) as { role: string });
}

async function appendAll(messages: Array<{ role: string }>, count: number, redact: boolean): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "ts-bench-redact-"));
  try {
    const manager = await SessionManager.create(join(dir, "cwd"), { root: dir, ...(redact ? { redact: "secrets" as const } : {}) });
    const start = performance.now();
    for (let i = 0; i < count; i++) manager.appendMessage(messages[i % messages.length]!);
    const ms = performance.now() - start;
    await manager.close();
    return ms;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Appends of real transcript messages with `redact: "secrets"` against plain appends of the same
 * messages, in the same run (issue 38 #7: at least 0.7× the throughput); then the detection report's
 * totals (recall on the labelled positives, false positives on code and on the real transcripts).
 */
export async function benchRedact(ctx: BenchContext): Promise<BenchRow[]> {
  const dir = realDir();
  const messages = workload(dir);
  const n = ctx.quick ? Math.min(messages.length, 1000) : messages.length * 3;
  await appendAll(messages, Math.min(200, n), true); // warm-up
  await appendAll(messages, Math.min(200, n), false);
  const plain: number[] = [];
  const redacted: number[] = [];
  for (let i = 0; i < ctx.repeats; i++) {
    plain.push(await appendAll(messages, n, false));
    redacted.push(await appendAll(messages, n, true));
  }
  const plainRate = n / (median(plain) / 1000);
  const redactRate = n / (median(redacted) / 1000);
  const report = runCorpus(dir);
  const positives = report.rules.reduce((a, s) => a + s.positives, 0);
  const found = report.rules.reduce((a, s) => a + s.found, 0);
  return [
    {
      scenario: `append with redact: "secrets" (${dir === null ? "synthetic" : "real transcript"} messages)`,
      unit: "appends/s",
      ours: redactRate,
      baseline: plainRate,
      baselineName: "plain appends",
      ratio: redactRate / plainRate,
      target: "≥ 0.7×",
      met: redactRate / plainRate >= 0.7,
      extra: { appends: n },
    },
    {
      scenario: "secret detection: recall on labelled positives",
      unit: "%",
      ours: (found / positives) * 100,
      baseline: null,
      baselineName: "",
      ratio: null,
      target: "per-rule floors (test)",
      met: report.rules.every((s) => s.found / s.positives >= (s.rule === "url-password" ? 0.66 : 1)),
      extra: { positives },
    },
    {
      scenario: "secret detection: false positives (code, this repository's src/, real transcripts)",
      unit: "hits",
      ours: report.codeHits.length + report.repoHits.length + report.realHits.length,
      baseline: null,
      baselineName: "",
      ratio: null,
      target: "0",
      met: report.codeHits.length + report.repoHits.length + report.realHits.length === 0 && report.realEntries > 0,
      extra: { codeNegatives: report.codeNegatives, repoLines: report.repoLines, realEntries: report.realEntries },
    },
  ];
}
