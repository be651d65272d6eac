import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "../../src/session/session-manager.ts";
import { median, quantile } from "../stats.ts";
import { agentMessage, prng } from "../workload.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { benchAppendShapes } from "./append-shapes.ts";

async function appendRun(count: number, fsync: boolean): Promise<{ ours: number; base: number; oursP99: number; baseP99: number }> {
  const dir = mkdtempSync(join(tmpdir(), "ts-bench-append-"));
  try {
    const random = prng(7);
    const messages = Array.from({ length: count }, (_, i) => agentMessage(random, i, 2048));
    // baseline: JSON.stringify + writeSync on a kept fd (+ fdatasync per line)
    const fd = openSync(join(dir, "baseline.jsonl"), "a");
    let parent: string | null = null;
    const baseLat: number[] = new Array(count);
    const baseStart = performance.now();
    for (let i = 0; i < count; i++) {
      const t = performance.now();
      const id = (0x10000000 + i).toString(16);
      writeSync(
        fd,
        `${JSON.stringify({ type: "message", id, parentId: parent, timestamp: new Date().toISOString(), message: messages[i] })}\n`,
      );
      if (fsync) fdatasyncSync(fd);
      parent = id;
      baseLat[i] = performance.now() - t;
    }
    const base = performance.now() - baseStart;
    closeSync(fd);

    const manager = await SessionManager.create(join(dir, "cwd"), { root: dir, fsync });
    const lat: number[] = new Array(count);
    const start = performance.now();
    for (let i = 0; i < count; i++) {
      const t = performance.now();
      manager.appendMessage(messages[i] as { role: string });
      lat[i] = performance.now() - t;
    }
    const ours = performance.now() - start;
    await manager.close();
    return { ours, base, oursP99: quantile(lat, 0.99), baseP99: quantile(baseLat, 0.99) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Appends of ~2 KB text entries against JSON.stringify + writeSync on a kept fd; then the W1/W2 shapes. */
export async function benchAppend(ctx: BenchContext): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const n = ctx.quick ? 2000 : 20000;
  await appendRun(500, false); // warm-up
  const runs = [];
  for (let i = 0; i < ctx.repeats; i++) runs.push(await appendRun(n, false));
  const ours = median(runs.map((r) => (r.ours / n) * 1000));
  const base = median(runs.map((r) => (r.base / n) * 1000));
  const p99 = median(runs.map((r) => r.oursP99 * 1000));
  const baseP99 = median(runs.map((r) => r.baseP99 * 1000));
  rows.push({
    scenario: "append (no fsync)",
    unit: "µs/append",
    ours,
    baseline: base,
    baselineName: "stringify+writeSync",
    ratio: ours / base,
    target: "≤ 1.5×",
    met: ours / base <= 1.5,
    extra: { appends: n },
  });
  rows.push({
    scenario: "append p99 (no fsync)",
    unit: "µs",
    ours: p99,
    baseline: baseP99,
    baselineName: "baseline p99",
    ratio: p99 / baseP99,
    target: "≤ 50 µs",
    met: p99 <= 50,
  });

  const nf = ctx.quick ? 200 : 1000;
  const fsyncRuns = [];
  for (let i = 0; i < ctx.repeats; i++) fsyncRuns.push(await appendRun(nf, true));
  const oursF = median(fsyncRuns.map((r) => (r.ours / nf) * 1000));
  const baseF = median(fsyncRuns.map((r) => (r.base / nf) * 1000));
  rows.push({
    scenario: "append (fsync: true)",
    unit: "µs/append",
    ours: oursF,
    baseline: baseF,
    baselineName: "writeSync+fdatasync",
    ratio: oursF / baseF,
    target: "≤ 1.2×",
    met: oursF / baseF <= 1.2,
    extra: { appends: nf },
  });
  rows.push(...(await benchAppendShapes(ctx)));
  return rows;
}
