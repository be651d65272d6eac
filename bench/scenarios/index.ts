import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSessionIndex } from "../../src/index/session-index.ts";
import { median, quantile } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { prng } from "../workload.ts";

/** Bytes of one generated session: 10,000 of them make the issue's 2 GB corpus (`--size 2GB`). */
const SESSION_BYTES = 200_000;

/** A vocabulary of pseudo-words drawn with a Zipf-like skew (few common, many rare), like prose and code. */
function vocabulary(random: () => number, size: number): string[] {
  const letters = "abcdefghijklmnopqrstuvwxyz";
  const words = new Set<string>();
  while (words.size < size) {
    let w = "";
    const n = 3 + Math.floor(random() * 8);
    for (let i = 0; i < n; i++) w += letters[Math.floor(random() * 26)];
    words.add(w);
  }
  return [...words];
}

function textOf(random: () => number, words: string[], chars: number): string {
  let out = "";
  while (out.length < chars) {
    const rank = Math.floor(words.length * random() ** 3); // skewed to the first words
    out += words[rank]! + (random() < 0.08 ? "\n" : " ");
  }
  return out;
}

function entry(random: () => number, words: string[], i: number, chars: number): string {
  const timestamp = new Date(1_760_000_000_000 + i * 1000).toISOString();
  const role = i % 3 === 0 ? "user" : i % 3 === 1 ? "assistant" : "toolResult";
  const content =
    role === "assistant"
      ? [
          { type: "thinking", thinking: textOf(random, words, chars / 4) },
          { type: "text", text: textOf(random, words, chars / 4) },
          { type: "toolCall", id: `t${i}`, name: "bash", arguments: { command: textOf(random, words, 60) } },
        ]
      : [{ type: "text", text: textOf(random, words, chars) }];
  const message = { role, content, ...(role === "assistant" ? { model: "claude-sonnet-4-5" } : {}) };
  return `${JSON.stringify({ type: "message", id: `e${i.toString(16).padStart(7, "0")}`, parentId: null, timestamp, message })}\n`;
}

/** Writes `sessions` files of about SESSION_BYTES each under 50 cwd buckets; returns their paths and total bytes. */
function writeCorpus(dir: string, sessions: number, words: string[]): { paths: string[]; bytes: number } {
  const random = prng(7);
  const paths: string[] = [];
  let bytes = 0;
  for (let s = 0; s < sessions; s++) {
    const bucket = join(dir, `-bench-${s % 50}`);
    mkdirSync(bucket, { recursive: true });
    const id = `${s.toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`;
    let body = `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: `/w/${s % 50}` })}\n`;
    for (let i = 0; body.length < SESSION_BYTES; i++) body += entry(random, words, i, 300 + Math.floor(random() * 1500));
    const path = join(bucket, `2026-01-01T00-00-00-000Z_${id}.jsonl`);
    writeFileSync(path, body);
    paths.push(path);
    bytes += Buffer.byteLength(body);
  }
  return { paths, bytes };
}

/** Read every file and JSON.parse each line: the least any indexer must do. */
function readAndParse(paths: string[]): number {
  let lines = 0;
  for (const path of paths) {
    const text = readFileSync(path, "utf8");
    for (let start = 0, nl = text.indexOf("\n"); nl !== -1; start = nl + 1, nl = text.indexOf("\n", start)) {
      JSON.parse(text.slice(start, nl));
      lines++;
    }
  }
  return lines;
}

function hasRipgrep(): boolean {
  return spawnSync("rg", ["--version"]).status === 0;
}

/**
 * The search index: build throughput against reading + JSON.parse of the same bytes; search
 * p50/p95 against `rg` over the same files; catch-up after 1,000 appends against reading those
 * bytes; the index's size as a share of the text bytes. `--size` sets the corpus (default 50 MB;
 * `--size 2GB` is the issue's 10,000 sessions); `--quick` 10 MB.
 */
export async function benchIndex(ctx: BenchContext): Promise<BenchRow[]> {
  const target = ctx.quick ? 10e6 : ctx.sizeBytes;
  const sessions = Math.max(5, Math.round(target / SESSION_BYTES));
  const root = mkdtempSync(join(tmpdir(), "ts-bench-index-"));
  try {
    const sessionsDir = join(root, "sessions");
    const words = vocabulary(prng(3), 30_000);
    const { paths, bytes } = writeCorpus(sessionsDir, sessions, words);
    const mb = bytes / 1e6;
    const rows: BenchRow[] = [];

    // build: a fresh index each repeat, against read + parse of the same files
    const build: number[] = [];
    const parse: number[] = [];
    for (let r = 0; r < ctx.repeats; r++) {
      rmSync(join(root, "index"), { recursive: true, force: true });
      let t = performance.now();
      readAndParse(paths);
      parse.push(performance.now() - t);
      const index = await openSessionIndex({ root });
      t = performance.now();
      await index.refresh();
      build.push(performance.now() - t);
      await index.close();
    }
    const ours = mb / (median(build) / 1000);
    const base = mb / (median(parse) / 1000);
    rows.push({
      scenario: `index build, ${sessions} sessions (${mb.toFixed(0)} MB)`,
      unit: "MB/s",
      ours,
      baseline: base,
      baselineName: "read + JSON.parse",
      ratio: ours / base,
      target: "≥ 0.5×",
      met: ours / base >= 0.5,
    });

    // search: queries of rare, middling and common words, a phrase and a prefix
    const index = await openSessionIndex({ root });
    const queries = [words[20_000]!, words[5_000]!, words[500]!, `${words[800]} ${words[900]}`, `"${words[1] ?? ""} ${words[2] ?? ""}"`];
    queries.push(`${words[3_000]!.slice(0, 3)}*`);
    const times: number[] = [];
    const rgTimes: number[] = [];
    const rg = hasRipgrep();
    if (!rg) process.stderr.write("SKIPPED: ripgrep (rg) not found; the search row has no rg baseline (apt-get install ripgrep)\n");
    const runs = Math.max(3, ctx.repeats * 4);
    for (let r = 0; r < runs; r++) {
      for (const q of queries) {
        const t = performance.now();
        await index.search(q, { limit: 20 });
        times.push(performance.now() - t);
        if (!rg) continue;
        const word = q.replace(/["*]/g, "").split(" ")[0]!;
        const t2 = performance.now();
        spawnSync("rg", ["-i", "-w", "-c", word, sessionsDir], { maxBuffer: 1 << 28 });
        rgTimes.push(performance.now() - t2);
      }
    }
    for (const [q, label] of [
      [0.5, "p50"],
      [0.95, "p95"],
    ] as const) {
      const o = quantile(times, q);
      const b = rg ? quantile(rgTimes, q) : null;
      rows.push({
        scenario: `search ${label} (refresh included), ${sessions} sessions`,
        unit: "ms",
        ours: o,
        baseline: b,
        baselineName: "rg -i -w",
        ratio: b === null ? null : b / o,
        target: label === "p50" ? "≥ 50× faster than rg, ≤ 30 ms" : "≥ 50× faster than rg",
        met: b === null ? null : b / o >= 50 && (label === "p95" || o <= 30),
      });
    }

    // catch-up after 1,000 appends spread over the sessions, against reading + parsing those bytes
    const random = prng(11);
    const before = new Map<string, number>();
    for (let i = 0; i < 1000; i++) {
      const path = paths[Math.floor(random() * paths.length)]!;
      if (!before.has(path)) before.set(path, statSync(path).size);
      appendFileSync(path, entry(random, words, 1_000_000 + i, 400));
    }
    let t = performance.now();
    const report = await index.refresh();
    const catchUp = performance.now() - t;
    t = performance.now();
    for (const [path, size] of before) {
      const end = statSync(path).size;
      const fd = openSync(path, "r");
      const buf = Buffer.allocUnsafe(end - size);
      readSync(fd, buf, 0, buf.length, size);
      closeSync(fd);
      for (const line of buf.toString("utf8").split("\n")) if (line !== "") JSON.parse(line);
    }
    const readBack = performance.now() - t;
    rows.push({
      scenario: `catch-up after 1,000 appends (${(report.bytesRead / 1e3).toFixed(0)} KB read)`,
      unit: "ms",
      ours: catchUp,
      baseline: readBack,
      baselineName: "read + parse the appended bytes",
      ratio: catchUp / readBack,
      target: "≤ 2×",
      met: catchUp / readBack <= 2,
    });
    const status = await index.status();
    await index.close();
    const indexBytes = readdirSync(join(root, "index"))
      .filter((n) => n.startsWith("sessions.sqlite"))
      .reduce((n, name) => n + statSync(join(root, "index", name)).size, 0);
    rows.push({
      scenario: `index size (${status.entriesIndexed} texts)`,
      unit: "MB",
      ours: indexBytes / 1e6,
      baseline: bytes / 1e6,
      baselineName: "session bytes",
      ratio: indexBytes / bytes,
      target: "reported",
      met: null,
    });
    return rows;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
