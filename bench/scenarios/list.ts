import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clearSessionInfoCache } from "../../src/session/discovery.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { agentMessage, prng } from "../workload.ts";

/** Listing 10,000 sessions against readdir + a 4 KB head read per file. */
export async function benchList(ctx: BenchContext): Promise<BenchRow[]> {
  const count = ctx.quick ? 2000 : 10_000;
  const root = mkdtempSync(join(tmpdir(), "ts-bench-list-"));
  try {
    const sessions = join(root, "sessions");
    const random = prng(5);
    for (let b = 0; b < 100; b++) {
      const bucket = join(sessions, `--home-u-project-${b}--`);
      mkdirSync(bucket, { recursive: true });
      for (let i = 0; i < count / 100; i++) {
        const id = `0197b000-0000-7000-8000-${String(b * 1000 + i).padStart(12, "0")}`;
        const lines = [JSON.stringify({ type: "session", version: 3, id, timestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, b * 100 + i)).toISOString(), cwd: `/home/u/project-${b}` })];
        let parent: string | null = null;
        for (let k = 0; k < 6; k++) {
          const eid = (0x10000000 + k).toString(16);
          lines.push(JSON.stringify({ type: "message", id: eid, parentId: parent, timestamp: "2025-01-01T00:00:00.000Z", message: agentMessage(random, k, 600) }));
          parent = eid;
        }
        writeFileSync(join(bucket, `2025-01-01T00-00-00-000Z_${id}.jsonl`), `${lines.join("\n")}\n`);
      }
    }
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
      { scenario: `list ${count} sessions (first listing)`, unit: "ms", ours: c, baseline: b, baselineName: "readdir + 4 KB heads", ratio: c / b, target: "≤ 1.5×", met: c / b <= 1.5 },
      { scenario: `list ${count} sessions (repeat, in-process cache)`, unit: "ms", ours: w, baseline: b, baselineName: "readdir + 4 KB heads", ratio: w / b, target: "≤ 1.5×", met: w / b <= 1.5 },
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
