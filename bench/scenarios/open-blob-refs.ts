import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "../../src/session/session-manager.ts";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { scanAndParse } from "./open.ts";

const IMAGE_BYTES = 1_500_000;
const REF = /^blob:sha256:([0-9a-f]{64})$/;

/** A deterministic, incompressible image payload (hashing cost does not depend on content). */
function imageBytes(seed: number): Buffer {
  const out = Buffer.allocUnsafe(IMAGE_BYTES);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < out.length; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out.writeUInt32LE(x >>> 0, i);
  }
  return out;
}

/** The raw baseline: chunked scan + JSON.parse, then each referenced blob read back as base64 (no check). */
function rawOpen(path: string, blobDir: string): number {
  let images = 0;
  for (const record of scanAndParse(path) as { message?: { content?: { type: string; data?: string }[] } }[]) {
    const content = record.message?.content;
    if (!Array.isArray(content)) continue;
    for (const block of content) {
      const m = block.type === "image" && typeof block.data === "string" ? REF.exec(block.data) : null;
      if (m === null) continue;
      block.data = readFileSync(join(blobDir, m[1]!)).toString("base64");
      images++;
    }
  }
  return images;
}

/** Times one eager, read-only open (its own store instance, as a fresh process would have). */
async function oursOpen(path: string, root: string): Promise<number> {
  const start = performance.now();
  const m = await SessionManager.open(path, { root, readOnly: true, rehydrate: "eager" });
  const ms = performance.now() - start;
  await m.close();
  return ms;
}

function timeSync(fn: () => unknown): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

/**
 * W4b in-process: an eager open of a session whose images are blob refs, (a) with blobs this store
 * wrote a moment ago (the proof log `.proven` may spare the re-hash) and (b) with the same blobs
 * copied in by someone else (every blob is hashed once), each against raw read + parse + blob reads.
 */
export async function benchOpenBlobRefs(ctx: BenchContext): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "ts-bench-blobrefs-"));
  try {
    const images = ctx.quick ? 8 : 40;
    const ownRoot = join(dir, "own");
    const m = await SessionManager.create("/bench/blob-refs", { root: ownRoot });
    for (let i = 0; i < images; i++) {
      m.appendMessage({
        role: "user",
        content: [
          { type: "text", text: `image ${i}` },
          { type: "image", mimeType: "image/png", data: imageBytes(i + 1).toString("base64") },
        ],
        timestamp: i,
      } as never);
      m.appendMessage({ role: "assistant", content: [{ type: "text", text: `seen ${i}` }], timestamp: i } as never);
    }
    const path = m.sessionFile!;
    await m.close();
    const blobDir = join(ownRoot, "blobs");
    const foreignRoot = join(dir, "foreign");
    cpSync(blobDir, join(foreignRoot, "blobs"), { recursive: true, filter: (src) => !src.endsWith(".proven") });
    if (rawOpen(path, blobDir) !== images) throw new Error("raw open found too few images");
    const raw: number[] = [];
    const own: number[] = [];
    const foreign: number[] = [];
    await oursOpen(path, ownRoot); // warm the module and the JIT like the raw call above
    for (let i = 0; i < ctx.repeats; i++) {
      raw.push(timeSync(() => rawOpen(path, blobDir)));
      own.push(await oursOpen(path, ownRoot));
      foreign.push(await oursOpen(path, foreignRoot));
    }
    const mb = (images * IMAGE_BYTES) / 1e6;
    const row = (scenario: string, times: number[], target: string, goal: number): BenchRow => {
      const ratio = median(times) / median(raw);
      return {
        scenario,
        unit: "ms",
        ours: median(times),
        baseline: median(raw),
        baselineName: "scan+JSON.parse+readFileSync each blob",
        ratio,
        target,
        met: ratio <= goal,
        extra: { blobMB: Number(mb.toFixed(1)), fastestRatio: Number((Math.min(...times) / Math.min(...raw)).toFixed(2)) },
      };
    };
    return [
      row("eager open of blob refs, blobs our store wrote", own, "≤ 1.1×", 1.1),
      row("eager open of blob refs, blobs copied in (hashed once)", foreign, "≤ 1.5×", 1.5),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
