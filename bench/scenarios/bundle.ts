import { spawnSync } from "node:child_process";
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { bundle } from "../../src/bundle/bundle-pack.ts";
import { unbundle } from "../../src/bundle/bundle-restore.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { imageBytes, writeTextSession } from "../workload.ts";

const TEXT_ID = "0190a000-0000-7000-8000-00000000bench";

/** A store with a text session of about `bytes` and a session holding `images` distinct images (blobs). */
async function makeStore(root: string, bytes: number, images: number): Promise<string[]> {
  const bucket = join(root, "sessions", "--bench--");
  mkdirSync(bucket, { recursive: true });
  writeTextSession(join(bucket, `2026-01-01T00-00-00-000Z_${TEXT_ID}.jsonl`), bytes);
  const m = await SessionManager.create("/bench/images", { root });
  for (let i = 0; i < images; i++) {
    m.appendMessage({
      role: "user",
      content: [{ type: "image", data: imageBytes(i + 1, 256 * 1024).toString("base64"), mimeType: "image/png" }],
    });
  }
  const id = m.header.id;
  await m.close();
  return [TEXT_ID, id];
}

function tar(args: string[]): void {
  const run = spawnSync("tar", args, { stdio: "ignore" });
  if (run.status !== 0) throw new Error(`tar ${args.join(" ")} exited ${run.status}`);
}

/**
 * Bundle and unbundle throughput against `tar` of the same files: `bundle` of the store's two
 * sessions into a file vs `tar cf` of its sessions and blobs directories; `unbundle` of that file
 * into an empty store (every member hashed and checked, then imported) vs `tar xf` into an empty
 * directory. Medians of the repeats, each pair measured in the same round.
 */
export async function benchBundle(ctx: BenchContext): Promise<BenchRow[]> {
  const work = mkdtempSync(join(tmpdir(), "ts-bench-bundle-"));
  try {
    const mb = ctx.quick ? 5 : Math.min(50, Math.round(ctx.sizeBytes / 1e6));
    const images = ctx.quick ? 8 : 40;
    const source = join(work, "source");
    const ids = await makeStore(source, mb * 1e6, images);
    const runs = { bundle: [] as number[], tarC: [] as number[], unbundle: [] as number[], tarX: [] as number[] };
    let bundleSize = 0;
    let tarSize = 0;
    for (let i = 0; i < ctx.repeats + 1; i++) {
      const file = join(work, `b${i}.tar`);
      const plain = join(work, `t${i}.tar`);
      let t = performance.now();
      await pipeline(bundle(ids, { root: source }), createWriteStream(file));
      const b = performance.now() - t;
      t = performance.now();
      tar(["cf", plain, "-C", source, "sessions", "blobs"]);
      const c = performance.now() - t;
      const into = join(work, `u${i}`);
      const plainInto = join(work, `x${i}`);
      mkdirSync(plainInto);
      t = performance.now();
      await unbundle(file, { root: into });
      const u = performance.now() - t;
      t = performance.now();
      tar(["xf", plain, "-C", plainInto]);
      const x = performance.now() - t;
      bundleSize = statSync(file).size;
      tarSize = statSync(plain).size;
      for (const p of [file, plain, into, plainInto]) rmSync(p, { recursive: true, force: true });
      if (i === 0) continue; // warm-up
      runs.bundle.push(b);
      runs.tarC.push(c);
      runs.unbundle.push(u);
      runs.tarX.push(x);
    }
    const mbOf = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000);
    const row = (what: string, ours: number, base: number, baselineName: string, bound: number): BenchRow => ({
      scenario: `${what} (${(bundleSize / 1e6).toFixed(0)} MB: a ${mb} MB text session, ${images} image blobs)`,
      unit: "MB/s",
      ours: mbOf(bundleSize, ours),
      baseline: mbOf(tarSize, base),
      baselineName,
      ratio: ours / base,
      target: `≤ ${bound}×`,
      met: ours / base <= bound,
      extra: { oursMs: Math.round(ours), baselineMs: Math.round(base) },
    });
    return [
      row("bundle to a file", median(runs.bundle), median(runs.tarC), "tar cf of the same files", 3),
      row("unbundle a file (checked, imported)", median(runs.unbundle), median(runs.tarX), "tar xf of the same files", 4),
    ];
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
