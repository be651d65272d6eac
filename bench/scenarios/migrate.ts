import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runChild } from "../helpers/child.ts";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { writeImageHeavyLegacy } from "../workload.ts";

function copyBytes(from: string, to: string): void {
  const inFd = openSync(from, "r");
  const outFd = openSync(to, "w");
  const buf = Buffer.allocUnsafe(1 << 20);
  try {
    for (let n = readSync(inFd, buf, 0, buf.length, null); n > 0; n = readSync(inFd, buf, 0, buf.length, null)) writeSync(outFd, buf, 0, n);
  } finally {
    closeSync(inFd);
    closeSync(outFd);
  }
}

/** Migrating an image-heavy legacy file (in a child, for its peak RSS) against reading and writing the same bytes. */
export async function benchMigrate(ctx: BenchContext): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "ts-bench-migrate-"));
  try {
    const path = join(dir, "legacy.jsonl");
    writeImageHeavyLegacy(path, ctx.quick ? 50e6 : Math.max(ctx.sizeBytes * 4, 200e6), 7);
    const mb = statSync(path).size / 1e6;
    const ours: number[] = [];
    const rss: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < Math.max(1, Math.min(3, ctx.repeats)); i++) {
      const t = performance.now();
      copyBytes(path, join(dir, `copy-${i}.jsonl`));
      base.push(performance.now() - t);
      rmSync(join(dir, `copy-${i}.jsonl`));
      const r = await runChild("rss-child.ts", ["migrate", path, join(dir, `store-${i}`)]);
      ours.push(r.ms!);
      rss.push(r.maxRssMB!);
      rmSync(join(dir, `store-${i}`), { recursive: true, force: true });
    }
    const o = mb / (median(ours) / 1000);
    const b = mb / (median(base) / 1000);
    const peak = Math.max(...rss);
    return [
      {
        scenario: `migrate image-heavy legacy (${mb.toFixed(0)} MB)`,
        unit: "MB/s",
        ours: o,
        baseline: b,
        baselineName: "read + write same bytes",
        ratio: o / b,
        target: "≥ 0.5×",
        met: o / b >= 0.5,
      },
      {
        scenario: "migrate peak RSS",
        unit: "MB",
        ours: peak,
        baseline: null,
        baselineName: "—",
        ratio: null,
        target: "≤ 256 MB",
        met: peak <= 256,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
