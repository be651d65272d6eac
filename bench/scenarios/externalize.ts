import { createHash } from "node:crypto";
import { closeSync, mkdtempSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BlobStore } from "../../src/blob/blob-store.ts";
import { externalizeImages } from "../../src/prepare/externalize-images.ts";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { imageBytes } from "../workload.ts";

/** Image externalization through the pipeline stage + BlobStore, against decode + sha256 + temp write + rename. */
export async function benchExternalize(ctx: BenchContext): Promise<BenchRow[]> {
  const count = ctx.quick ? 8 : 24;
  const payloads = Array.from({ length: count }, (_, i) => imageBytes(900 + i, 1_000_000 + i * 40_000).toString("base64"));
  const entries = payloads.map((data, i) => ({
    type: "message",
    id: `e${i}`,
    parentId: null,
    timestamp: "t",
    message: { role: "user", content: [{ type: "image", data, mimeType: "image/png" }] },
  }));
  const totalMB = payloads.reduce((a, p) => a + (p.length * 3) / 4, 0) / 1e6;
  const ours: number[] = [];
  const base: number[] = [];
  for (let run = 0; run < ctx.repeats * 2 + 1; run++) {
    const dir = mkdtempSync(join(tmpdir(), "ts-bench-ext-"));
    try {
      const runBaseline = () => {
        const t = performance.now();
        for (let i = 0; i < count; i++) {
          const bytes = Buffer.from(payloads[i]!, "base64");
          const hash = createHash("sha256").update(bytes).digest("hex");
          const temp = join(dir, `.b${i}.tmp`);
          const fd = openSync(temp, "wx", 0o600);
          writeSync(fd, bytes);
          closeSync(fd);
          renameSync(temp, join(dir, `base-${hash}`));
        }
        return performance.now() - t;
      };
      const runOurs = () => {
        const t = performance.now();
        const store = new BlobStore(join(dir, "blobs"));
        for (const entry of entries) {
          const { blobs } = externalizeImages(entry, 1024);
          for (const blob of blobs) store.putHashedSync(blob.hash, blob.bytes);
        }
        return performance.now() - t;
      };
      // alternate which goes first: the second one pays for the first one's dirty pages
      let b: number;
      let o: number;
      if (run % 2) {
        b = runBaseline();
        o = runOurs();
      } else {
        o = runOurs();
        b = runBaseline();
      }
      if (run > 0) {
        base.push(b);
        ours.push(o);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const o = median(ours) / totalMB;
  const b = median(base) / totalMB;
  return [
    {
      scenario: "image externalization",
      unit: "ms/MB",
      ours: o,
      baseline: b,
      baselineName: "decode+sha256+temp write+rename",
      ratio: o / b,
      target: "≤ 1.3×",
      met: o / b <= 1.3,
      extra: { images: count, MB: Number(totalMB.toFixed(1)) },
    },
  ];
}
