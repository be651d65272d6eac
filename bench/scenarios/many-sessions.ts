import { spawn } from "node:child_process";
import { join } from "node:path";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";

const ROOT = join(import.meta.dirname, "../..");

/** Runs the W7 child under `ulimit -n <fds>`; returns its JSON result line. */
function runLimited(fds: number, count: number, rounds: number, shape: Shape): Promise<{ ours?: number; base?: number; error?: string }> {
  const script = join(ROOT, "bench/helpers/many-sessions.ts");
  const command = `ulimit -n ${fds} && exec "${process.execPath}" --import tsx "${script}" ${count} ${rounds} ${shape}`;
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", command], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const last = out.trim().split("\n").at(-1);
      if (!last) return reject(new Error(`many-sessions exited ${code}: ${err.slice(-500)}`));
      resolve(JSON.parse(last));
    });
  });
}

type Shape = "2k" | "w1";

/** The messages each row appends: ~2 KB agent messages, or W1's ~9 KB ones (the issue's definition). */
const SHAPES: ReadonlyArray<{ shape: Shape; label: string }> = [
  { shape: "2k", label: "2 KB messages" },
  { shape: "w1", label: "W1's ~9 KB messages" },
];

/**
 * W7: 5,000 writable sessions open at once in one process under `ulimit -n 1024`, appends in rounds,
 * against the same appends to one session: one row with 2 KB messages, one with W1's messages.
 */
export async function benchManySessions(ctx: BenchContext): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const { shape, label } of SHAPES) rows.push(await benchShape(ctx, shape, label));
  return rows;
}

async function benchShape(ctx: BenchContext, shape: Shape, label: string): Promise<BenchRow> {
  const count = ctx.quick ? 2000 : 5000;
  const rounds = 4;
  const runs = [];
  for (let i = 0; i < ctx.repeats; i++) runs.push(await runLimited(1024, count, rounds, shape));
  const scenario = `${count} sessions open, ulimit -n 1024 (append, ${label})`;
  const failed = runs.find((r) => r.error !== undefined);
  if (failed !== undefined) {
    process.stderr.write(`many-sessions failed: ${failed.error}\n`);
    return {
      scenario,
      unit: "µs/append",
      ours: Number.NaN,
      baseline: null,
      baselineName: "one session",
      ratio: null,
      target: "works, ≤ 1.2×",
      met: false,
      extra: { error: failed.error! },
    };
  }
  const ours = median(runs.map((r) => r.ours!));
  const base = median(runs.map((r) => r.base!));
  return {
    scenario,
    unit: "µs/append",
    ours,
    baseline: base,
    baselineName: "same appends, one session",
    ratio: ours / base,
    target: "works, ≤ 1.2×",
    met: ours / base <= 1.2,
    extra: { sessions: count, rounds, messages: shape },
  };
}
