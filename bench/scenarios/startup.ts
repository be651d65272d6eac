import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";

const REPO = join(import.meta.dirname, "..", "..");
const BIN = join(REPO, "bin", "transcript-store.mjs");

/**
 * Fresh-process start-up (issue 34): each CLI command, and the library's main import, timed as a
 * whole process (20 runs, interleaved, medians) beside `node -e 0` from the same runs. Runs what
 * `bin/transcript-store.mjs` runs: `dist/` when built (`npm run build` first), else the sources through tsx.
 */
export async function benchStartup(ctx: BenchContext): Promise<BenchRow[]> {
  const runs = ctx.quick ? 5 : 20;
  const root = mkdtempSync(join(tmpdir(), "ts-bench-startup-"));
  const store = ["--root", root];
  const index = pathToFileURL(join(REPO, "dist", "index.js")).href;
  const cases: [string, string[], string][] = [
    ["node -e 0", ["-e", "0"], ""],
    ["--version", [BIN, "--version"], "≤ 1.3×"],
    ["--help", [BIN, "--help"], "≤ 1.3×"],
    ["ls --all (empty store)", [BIN, ...store, "ls", "--all"], "≤ 1.5×"],
    ["search (empty store, no hits)", [BIN, ...store, "search", "parser"], "≤ 1.5×"],
    ["the library's main import", ["--input-type=module", "-e", `await import(${JSON.stringify(index)})`], "≤ 1.5×"],
  ];
  const times = new Map<string, number[]>();
  try {
    for (let r = 0; r < runs; r++)
      for (const [name, args] of cases) {
        const t = performance.now();
        spawnSync(process.execPath, args, { stdio: "ignore", cwd: REPO });
        times.set(name, [...(times.get(name) ?? []), performance.now() - t]);
      }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const base = median(times.get("node -e 0")!);
  return cases.slice(1).map(([name, , target]) => {
    const ours = median(times.get(name)!);
    const limit = Number(/[\d.]+/.exec(target)![0]);
    return {
      scenario: `start-up, fresh process: ${name} (${runs} runs, medians)`,
      unit: "ms",
      ours,
      baseline: base,
      baselineName: "node -e 0",
      ratio: ours / base,
      target,
      met: ours / base <= limit,
    };
  });
}
