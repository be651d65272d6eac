import { spawn } from "node:child_process";
import { join } from "node:path";
import { scratchDatabase } from "../helpers/pg-cluster.ts";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";

const ROOT = join(import.meta.dirname, "../..");
const PROCESSES = 8;

interface ChildResult {
  start: number;
  end: number;
  /** The writer's own CPU ms while appending. */
  cpu: number;
  batches: number[];
}

/**
 * Starts `PROCESSES` writers, lets them all connect and prepare, then says "go" to all at once;
 * resolves to each one's result. Throughput is counted from the first start to the last end.
 */
function writers(args: (i: number) => string[]): Promise<ChildResult[]> {
  const script = join(ROOT, "bench/helpers/pg-append-child.ts");
  return new Promise((resolve, reject) => {
    const results: ChildResult[] = new Array(PROCESSES);
    let ready = 0;
    let done = 0;
    const children = Array.from({ length: PROCESSES }, (_, i) => {
      const child = spawn(process.execPath, ["--import", "tsx", script, ...args(i)], { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] });
      let out = "";
      let err = "";
      let isReady = false;
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        out += d;
        if (isReady || !out.includes("ready\n")) return;
        isReady = true;
        if (++ready === PROCESSES) for (const c of children) c.stdin.write("go\n");
      });
      child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
      child.on("error", reject);
      child.on("close", (code) => {
        const last = out.trim().split("\n").at(-1);
        if (code !== 0 || last === undefined || last === "ready") {
          for (const c of children) c.kill();
          return reject(new Error(`pg-append-child exited ${code}: ${err.slice(-500)}`));
        }
        results[i] = JSON.parse(last);
        if (++done === PROCESSES) resolve(results);
      });
      return child;
    });
  });
}

const throughput = (results: ChildResult[], perChild: number) =>
  ((perChild * results.length) / (Math.max(...results.map((r) => r.end)) - Math.min(...results.map((r) => r.start)))) * 1000;

/** 8 processes appending to 8 sessions of one server through SessionManager, against 8 raw batched-INSERT processes. */
export async function benchPgAppend8(ctx: BenchContext): Promise<BenchRow[]> {
  const perChild = ctx.quick ? 1000 : 5000;
  const db = await scratchDatabase(ctx.pgUrl!);
  try {
    const ours: number[] = [];
    const raw: number[] = [];
    const cpu = { ours: [] as number[], raw: [] as number[] };
    for (let r = 0; r < ctx.repeats; r++) {
      const mine = await writers((i) => ["ours", db.url, String(perChild), String(i)]);
      const sizes = mine[0]!.batches.join(",");
      for (const m of mine) if (m.batches.join(",") !== sizes) throw new Error("the writers committed different batches");
      const theirs = await writers((i) => ["raw", db.url, String(perChild), String(i), sizes]);
      ours.push(throughput(mine, perChild));
      raw.push(throughput(theirs, perChild));
      cpu.ours.push(mine.reduce((n, m) => n + m.cpu, 0) / (perChild * PROCESSES));
      cpu.raw.push(theirs.reduce((n, m) => n + m.cpu, 0) / (perChild * PROCESSES));
    }
    const o = median(ours);
    const b = median(raw);
    return [
      {
        scenario: `pg append, ${PROCESSES} processes × ${perChild}`,
        unit: "appends/s",
        ours: o,
        baseline: b,
        baselineName: `${PROCESSES} batched-INSERT processes`,
        ratio: o / b,
        target: "≥ 0.8×",
        met: o / b >= 0.8,
        extra: {
          processes: PROCESSES,
          perProcess: perChild,
          clientCpuUsPerAppend: Number((median(cpu.ours) * 1000).toFixed(1)),
          rawClientCpuUsPerAppend: Number((median(cpu.raw) * 1000).toFixed(1)),
        },
      },
    ];
  } finally {
    await db.drop();
  }
}
