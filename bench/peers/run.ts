// `npm run bench:peers [-- --runs 3] [--only W1,W5] [--scale 0.1] [--impls raw,us,pi,omp]`
// The same seeded W1–W6 workloads (issue 14) through raw Node, us, pi (Node) and omp (Bun), each job in its
// own child process; prints one table of medians with ratios to raw Node of the same runs, and writes JSON
// to bench/results/.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, totalmem, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cwdBucket } from "../../src/session/paths.ts";
import { BUN, OMP_VERSION, PI_VERSION } from "./paths.ts";
import { IMPLS, type Impl, runPeer } from "./spawn.ts";
import { renderTable, type RowSpec, type Samples } from "./table.ts";
import { CWD, type Job, sizes, WORKLOADS, type Workload, writeBucket, writeImageSession, writeTextSession } from "./workloads.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    only: { type: "string" },
    scale: { type: "string", default: "1" },
    impls: { type: "string", default: IMPLS.join(",") },
  },
});
const runs = Math.max(1, Number(values.runs));
const scale = Number(values.scale);
if (!(scale > 0)) throw new Error(`bad --scale ${values.scale}`);
const only = (values.only?.split(",") ?? [...WORKLOADS]).map((w) => w.trim().toUpperCase()) as Workload[];
for (const w of only) if (!WORKLOADS.includes(w)) throw new Error(`unknown workload ${w}; known: ${WORKLOADS.join(", ")}`);
const impls = values.impls!.split(",").map((i) => i.trim()) as Impl[];
for (const i of impls) if (!IMPLS.includes(i)) throw new Error(`unknown implementation ${i}; known: ${IMPLS.join(", ")}`);
const size = sizes(scale);

/** One child to spawn per run: the job, which implementation, and the key its result is filed under. */
interface Spawn {
  key: string;
  impl: Impl;
  job: Omit<Job, "work">;
}

/** W3/W4 must load the same number of entries everywhere (ours in both modes), or the figures compare different work. */
function entryMismatches(samples: Samples): string[] {
  const counts: Record<string, string[]> = {};
  for (const [key, byImpl] of Object.entries(samples)) {
    counts[key.slice(0, 2)] ??= [];
    const list = counts[key.slice(0, 2)]!;
    for (const [impl, results] of Object.entries(byImpl))
      for (const r of results) if (r.entries !== undefined) list.push(`${key} ${impl}: ${r.entries}`);
  }
  return Object.entries(counts)
    .filter(([, list]) => new Set(list.map((c) => c.split(": ")[1])).size > 1)
    .map(([w, list]) => `\nWARNING ${w}: entries loaded differ: ${list.join(", ")}`);
}

const root = mkdtempSync(join(tmpdir(), "ts-bench-peers-"));
const mb = (path: string) => statSync(path).size / 1e6;
const spawns: Spawn[] = [];
const rows: RowSpec[] = [];
const all = (key: string) => ({ raw: key, pi: key, omp: key, us: key });
const each = (key: string, job: Omit<Job, "work">) => {
  for (const impl of IMPLS) spawns.push({ key, impl, job });
};
try {
  process.stderr.write(`generating seeded inputs in ${root}…\n`);
  for (const w of only) {
    if (w === "W1") {
      each("W1", { workload: "W1", count: size.w1Appends });
      rows.push({
        label: `W1 ${size.w1Appends.toLocaleString("en-US")} appends of ~9 KB messages, total`,
        unit: "ms",
        metric: "ms",
        jobs: all("W1"),
      });
    } else if (w === "W2") {
      each("W2", { workload: "W2", count: size.w2Entries });
      const label = "W2 image entry (300 KB base64 PNG) p50";
      rows.push({ label, unit: "µs", metric: "imageP50Us", jobs: all("W2") });
      rows.push({ label: "W2 text entry p50", unit: "µs", metric: "textP50Us", jobs: all("W2") });
    } else if (w === "W3") {
      const source = join(root, "w3-text.jsonl");
      writeTextSession(source, size.w3Bytes, 31);
      each("W3", { workload: "W3", count: 0, source });
      rows.push({ label: `W3 open ${mb(source).toFixed(0)} MB text`, unit: "ms", metric: "ms", jobs: all("W3") });
    } else if (w === "W4") {
      const source = join(root, "w4-images.jsonl");
      writeImageSession(source, size.w4Bytes, 41);
      for (const impl of IMPLS.filter((i) => i !== "us")) spawns.push({ key: "W4", impl, job: { workload: "W4", count: 0, source } });
      for (const mode of ["lazy", "eager"] as const)
        spawns.push({ key: `W4-${mode}`, impl: "us", job: { workload: "W4", count: 0, source, mode } });
      const label = `W4 open ${mb(source).toFixed(0)} MB inline images`;
      const one = { pi: "(one mode: row above)", omp: "(one mode: row above)" };
      rows.push({ label: `${label}, ours lazy`, unit: "ms", metric: "ms", jobs: { raw: "W4", pi: "W4", omp: "W4", us: "W4-lazy" } });
      rows.push({ label: `${label}, ours eager`, unit: "ms", metric: "ms", jobs: { raw: "W4", us: "W4-eager" }, notes: one });
      rows.push({ label: "W4 peak RSS, ours lazy", unit: "MB", metric: "rssMB", jobs: { raw: "W4", pi: "W4", omp: "W4", us: "W4-lazy" } });
      rows.push({ label: "W4 peak RSS, ours eager", unit: "MB", metric: "rssMB", jobs: { raw: "W4", us: "W4-eager" }, notes: one });
    } else if (w === "W5") {
      const bucket = join(root, "w5", cwdBucket(CWD, "omp"));
      writeBucket(bucket, size.w5Sessions);
      each("W5", { workload: "W5", count: size.w5Sessions, source: bucket });
      rows.push({
        label: `W5 first listing, ${size.w5Sessions.toLocaleString("en-US")} sessions`,
        unit: "ms",
        metric: "ms",
        jobs: all("W5"),
      });
    } else if (w === "W6") {
      const source = join(root, "w6-source.jsonl");
      writeTextSession(source, size.w6Bytes, 61);
      each("W6", { workload: "W6", count: 0, source });
      each("W6-artifacts", { workload: "W6-artifacts", count: size.w6Files });
      const artifactsMB = ((size.w6Files * 250_000) / 1e6).toFixed(0);
      rows.push({
        label: `W6 fork a ${mb(source).toFixed(mb(source) < 10 ? 1 : 0)} MB session (file only)`,
        unit: "ms",
        metric: "ms",
        jobs: all("W6"),
      });
      const label = `W6 fork with a ${artifactsMB} MB / ${size.w6Files}-file artifacts dir`;
      rows.push({ label, unit: "ms", metric: "ms", jobs: all("W6-artifacts") });
    }
  }

  const samples: Samples = {};
  const todo = spawns.filter((s) => impls.includes(s.impl));
  for (let run = 0; run < runs; run++) {
    // Rotate who goes first so no implementation always meets a cold or a warm machine.
    const order = IMPLS.map((_, i) => IMPLS[(i + run) % IMPLS.length]!);
    const ordered = [...todo].sort(
      (a, b) =>
        WORKLOADS.indexOf(a.job.workload.slice(0, 2) as Workload) - WORKLOADS.indexOf(b.job.workload.slice(0, 2) as Workload) ||
        order.indexOf(a.impl) - order.indexOf(b.impl),
    );
    for (const s of ordered) {
      const work = mkdtempSync(join(root, `${s.key}-${s.impl}-`));
      const result = await runPeer(s.impl, { ...s.job, work });
      rmSync(work, { recursive: true, force: true });
      samples[s.key] ??= {};
      samples[s.key]![s.impl] ??= [];
      samples[s.key]![s.impl]!.push(result);
      const shown = result.failed ?? result.unsupported ?? JSON.stringify(result);
      process.stderr.write(`run ${run + 1}/${runs} ${s.key} ${s.impl}: ${shown}\n`);
    }
  }

  const bun = execFileSync(BUN, ["--version"], { encoding: "utf8" }).trim();
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB`;
  const date = new Date().toISOString();
  const { markdown, cells } = renderTable(samples, rows);
  console.log(`\n${date}; ${machine}; Node ${process.version}, Bun ${bun}; pi ${PI_VERSION}, omp ${OMP_VERSION}`);
  console.log(`medians of ${runs} run(s) at --scale ${scale}; (×) = ratio to raw Node of the same runs\n`);
  console.log(markdown);
  for (const line of entryMismatches(samples)) console.log(line);
  const results = join(import.meta.dirname, "../results");
  mkdirSync(results, { recursive: true });
  const out = join(results, `peers-${date.replace(/[:.]/g, "-")}.json`);
  const meta = { date, machine, node: process.version, bun, pi: PI_VERSION, omp: OMP_VERSION, runs, scale, only, impls };
  writeFileSync(out, `${JSON.stringify({ ...meta, cells, samples }, null, 2)}\n`);
  console.log(`\nJSON: ${out}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
