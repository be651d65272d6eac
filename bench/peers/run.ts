// `npm run bench:peers [-- --runs 3] [--only W1,W5] [--scale 0.1] [--impls raw,us,pi,raw-bun,omp]`
// The same seeded W1–W6 workloads (issue 14) through raw Node, us, pi (Node), raw Bun and omp (Bun), each
// job in its own child process; prints one table of medians with ratios to the raw baseline of the same runtime
// in the same runs, and writes JSON to bench/results/.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BUN, OMP_VERSION, PI_VERSION } from "./paths.ts";
import { IMPLS, type Impl, runPeer } from "./spawn.ts";
import { renderTable, type Samples } from "./table.ts";
import { plan } from "./plan.ts";
import { sizes, WORKLOADS, type Workload } from "./workloads.ts";

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
let failed = 0;
const loadStart = loadavg()[0]!;
try {
  process.stderr.write(`generating seeded inputs in ${root}…\n`);
  const { spawns, rows } = plan(only, size, root);
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
      if (result.failed) failed++;
      const shown = result.failed ?? result.unsupported ?? JSON.stringify(result);
      process.stderr.write(`run ${run + 1}/${runs} ${s.key} ${s.impl}: ${shown}\n`);
    }
  }

  const bun = execFileSync(BUN, ["--version"], { encoding: "utf8" }).trim();
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB`;
  const date = new Date().toISOString();
  const { markdown, cells } = renderTable(samples, rows);
  console.log(`\n${date}; ${machine}; Node ${process.version}, Bun ${bun}; pi ${PI_VERSION}, omp ${OMP_VERSION}`);
  const load = `load average ${loadStart.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end`;
  console.log(
    `medians of ${runs} run(s) at --scale ${scale}; (×) = ratio to raw Node (us, pi) or raw Bun (omp) of the same runs; ${load}\n`,
  );
  console.log(markdown);
  const mismatches = entryMismatches(samples);
  for (const line of mismatches) console.log(line);
  failed += mismatches.length;
  const results = join(import.meta.dirname, "../results");
  mkdirSync(results, { recursive: true });
  const out = join(results, `peers-${date.replace(/[:.]/g, "-")}.json`);
  const meta = { date, machine, node: process.version, bun, pi: PI_VERSION, omp: OMP_VERSION, runs, scale, only, impls };
  writeFileSync(out, `${JSON.stringify({ ...meta, cells, samples }, null, 2)}\n`);
  console.log(`\nJSON: ${out}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
if (failed > 0) {
  console.error(`${failed} child job(s) failed or disagreed: see the table`);
  process.exitCode = 1;
}
