import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runChild } from "../helpers/child.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { writeImageHeavyLegacy } from "../workload.ts";

/** Peak RSS of a lazy open of image-heavy legacy sessions of two sizes: it should not grow with the images. */
export async function benchOpenLazy(ctx: BenchContext): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "ts-bench-lazy-"));
  try {
    const small = join(dir, "small.jsonl");
    const large = join(dir, "large.jsonl");
    const smallSize = ctx.quick ? 30e6 : 100e6;
    writeImageHeavyLegacy(small, smallSize, 3);
    writeImageHeavyLegacy(large, smallSize * 3, 4);
    const rss = async (path: string) =>
      (await runChild("rss-child.ts", ["open-lazy", path, join(dir, `store-${Math.random()}`)])).maxRssMB!;
    const rSmall = await rss(small);
    const rLarge = await rss(large);
    const mbSmall = statSync(small).size / 1e6;
    const mbLarge = statSync(large).size / 1e6;
    return [
      {
        scenario: `open lazy, image-heavy (${mbLarge.toFixed(0)} MB vs ${mbSmall.toFixed(0)} MB)`,
        unit: "MB peak RSS",
        ours: rLarge,
        baseline: rSmall,
        baselineName: `same open of ${mbSmall.toFixed(0)} MB`,
        ratio: rLarge / rSmall,
        target: "RSS independent of image bytes",
        met: rLarge / rSmall < 1.5,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
