import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "../../src/session/session-manager.ts";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { agentMessage, imageBytes, prng } from "../workload.ts";

/** Forking a session with a 50 MB artifacts directory against a recursive copy of it. */
export async function benchFork(ctx: BenchContext): Promise<BenchRow[]> {
  const root = mkdtempSync(join(tmpdir(), "ts-bench-fork-"));
  try {
    const m = await SessionManager.create(join(root, "proj"), { root, rehydrate: "lazy" });
    const random = prng(9);
    for (let i = 0; i < 200; i++) m.appendMessage(agentMessage(random, i, 1500) as { role: string });
    for (let i = 0; i < 50; i++) m.artifacts!.save(imageBytes(i, 1_000_000).toString("latin1"), { toolType: "bash" });
    const ours: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < ctx.repeats + 1; i++) {
      let t = performance.now();
      cpSync(m.artifactsDir!, join(root, `copy-${i}`), { recursive: true });
      cpSync(m.sessionFile!, join(root, `copy-${i}.jsonl`));
      const b = performance.now() - t;
      t = performance.now();
      const fork = await m.fork();
      const o = performance.now() - t;
      await fork.close();
      if (i > 0) {
        base.push(b);
        ours.push(o);
      }
    }
    await m.close();
    const o = median(ours);
    const b = median(base);
    return [
      {
        scenario: "fork with a 50 MB artifacts dir",
        unit: "ms",
        ours: o,
        baseline: b,
        baselineName: "recursive copy",
        ratio: o / b,
        target: "≤ 0.25×",
        met: o / b <= 0.25,
      },
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
