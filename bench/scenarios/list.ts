import { closeSync, mkdtempSync, openSync, readdirSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clearSessionInfoCache } from "../../src/session/discovery.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { writeSessionTree } from "../workload.ts";
import { cwdBucket } from "../../src/session/paths.ts";

/** Listing 10,000 sessions against readdir + a 4 KB head read per file. */
export async function benchList(ctx: BenchContext): Promise<BenchRow[]> {
  const count = ctx.quick ? 2000 : 10_000;
  const root = mkdtempSync(join(tmpdir(), "ts-bench-list-"));
  try {
    const sessions = join(root, "sessions");
    const cwds = Array.from({ length: 100 }, (_, b) => `/home/u/project-${b}`);
    writeSessionTree(sessions, cwds, count / 100, cwdBucket);
    const baseline = () => {
      const buf = Buffer.allocUnsafe(4096);
      let n = 0;
      for (const bucket of readdirSync(sessions)) {
        for (const name of readdirSync(join(sessions, bucket))) {
          const fd = openSync(join(sessions, bucket, name), "r");
          readSync(fd, buf, 0, 4096, 0);
          closeSync(fd);
          n++;
        }
      }
      return n;
    };
    const cold: number[] = [];
    const warm: number[] = [];
    const base: number[] = [];
    baseline();
    await SessionManager.listAll({ root });
    const listAll = async () => {
      const t = performance.now();
      if ((await SessionManager.listAll({ root })).length !== count) throw new Error("listAll miscounted");
      return performance.now() - t;
    };
    for (let i = 0; i < ctx.repeats; i++) {
      const t = performance.now();
      if (baseline() !== count) throw new Error("baseline miscounted");
      base.push(performance.now() - t);
      clearSessionInfoCache();
      cold.push(await listAll()); // every file opened and parsed
      warm.push(await listAll()); // files unchanged since: one stat each
    }
    const b = median(base);
    const c = median(cold);
    const w = median(warm);
    return [
      {
        scenario: `list ${count} sessions (first listing)`,
        unit: "ms",
        ours: c,
        baseline: b,
        baselineName: "readdir + 4 KB heads",
        ratio: c / b,
        target: "≤ 1.5×",
        met: c / b <= 1.5,
      },
      {
        scenario: `list ${count} sessions (repeat, in-process cache)`,
        unit: "ms",
        ours: w,
        baseline: b,
        baselineName: "readdir + 4 KB heads",
        ratio: w / b,
        target: "≤ 1.5×",
        met: w / b <= 1.5,
      },
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
