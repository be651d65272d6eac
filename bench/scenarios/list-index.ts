import { mkdtempSync, readdirSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clearSessionInfoCache } from "../../src/session/discovery.ts";
import { cwdBucket } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { writeSessionTree } from "../workload.ts";

/** Sessions listed. @default 2000; `--list-sessions 10000` for the full size */
const DEFAULT_SESSIONS = 2000;

/**
 * The first listing of a process (no in-process cache) answered from a warm index, against the same
 * listing reading every file's head and tail (today's first `ls`), both in this run. The files are
 * made an hour old, as most of a real store is: a file changed in the last seconds is never cached.
 */
export async function benchListIndex(ctx: BenchContext): Promise<BenchRow[]> {
  const count = ctx.listSessions ?? DEFAULT_SESSIONS;
  const root = mkdtempSync(join(tmpdir(), "ts-bench-list-index-"));
  try {
    const sessions = join(root, "sessions");
    const buckets = Math.max(1, Math.round(count / 100));
    const cwds = Array.from({ length: buckets }, (_, b) => `/home/u/project-${b}`);
    writeSessionTree(sessions, cwds, Math.ceil(count / buckets), cwdBucket);
    const total = Math.ceil(count / buckets) * buckets;
    const hourAgo = new Date(Date.now() - 3_600_000);
    for (const bucket of readdirSync(sessions))
      for (const name of readdirSync(join(sessions, bucket))) utimesSync(join(sessions, bucket, name), hourAgo, hourAgo);
    const first = async (listIndex: "off" | "auto" | "create") => {
      clearSessionInfoCache();
      const t = performance.now();
      const list = await SessionManager.listAll({ root, listIndex });
      const ms = performance.now() - t;
      if (list.length !== total) throw new Error(`listed ${list.length} of ${total}`);
      return ms;
    };
    await first("off"); // page cache warm for both
    const filling = await first("create"); // creates the index and fills its listing rows
    await first("auto"); // both code paths compiled before measuring
    const base: number[] = [];
    const warm: number[] = [];
    // Alternated, so that neither side always pays for the other's garbage.
    for (let i = 0; i < ctx.repeats; i++) {
      if (i % 2 === 0) base.push(await first("off"));
      warm.push(await first("auto"));
      if (i % 2 === 1) base.push(await first("off"));
    }
    const b = median(base);
    const w = median(warm);
    return [
      {
        scenario: `first ls of ${total} sessions from a warm index`,
        unit: "ms",
        ours: w,
        baseline: b,
        baselineName: "the same listing reading every file",
        ratio: w / b,
        target: "≤ 0.2×",
        met: w / b <= 0.2,
        // On a loaded machine the medians drift with the other processes; the fastest runs show the work itself.
        extra: { fastestOurs: Math.min(...warm), fastestBaseline: Math.min(...base), fastestRatio: Math.min(...warm) / Math.min(...base) },
      },
      {
        scenario: `first ls of ${total} sessions filling a new index (listIndex: create, once)`,
        unit: "ms",
        ours: filling,
        baseline: b,
        baselineName: "the same listing reading every file",
        ratio: filling / b,
        target: "reported",
        met: null,
      },
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
