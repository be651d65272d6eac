import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "../../src/session/session-manager.ts";
import type { SessionManagerOptions } from "../../src/session/session-options.ts";
import { median } from "../stats.ts";
import { agentMessage, imageBytes, prng } from "../workload.ts";
import type { BenchContext, BenchRow } from "../types.ts";

/** ms to append `messages` to a new session made with `options`. */
async function appendAll(messages: unknown[], options: SessionManagerOptions): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "ts-bench-append-enc-"));
  try {
    const manager = await SessionManager.create(join(dir, "cwd"), { root: dir, ...options });
    const start = performance.now();
    for (const message of messages) manager.appendMessage(message as { role: string });
    const ms = performance.now() - start;
    await manager.close();
    return ms;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Medians (ms) of appending `messages` plainly and encrypted, alternating which side runs first. */
async function alternate(messages: unknown[], encryption: SessionManagerOptions["encryption"], repeats: number) {
  await appendAll(messages.slice(0, 50), {}); // warm-up
  await appendAll(messages.slice(0, 50), { encryption });
  const plain: number[] = [];
  const encrypted: number[] = [];
  for (let i = 0; i < repeats; i++) {
    // Alternating order: neither side always runs on a warmer (or busier) machine.
    if (i % 2 === 0) {
      plain.push(await appendAll(messages, {}));
      encrypted.push(await appendAll(messages, { encryption }));
    } else {
      encrypted.push(await appendAll(messages, { encryption }));
      plain.push(await appendAll(messages, {}));
    }
  }
  return { plain: median(plain), encrypted: median(encrypted) };
}

/**
 * Appends to an encrypted session against plain appends, same messages, same run, alternating: ~2 KB
 * text entries, and entries carrying one ~200 KB image each (plain: a sha256 blob; encrypted: a keyed
 * blob, HMAC + AES-256-GCM, README Privacy).
 */
export async function benchAppendEncrypted(ctx: BenchContext): Promise<BenchRow[]> {
  const n = ctx.quick ? 2000 : 20000;
  const random = prng(7);
  const messages = Array.from({ length: n }, (_, i) => agentMessage(random, i, 2048));
  const encryption = { key: randomBytes(32) };
  const text = await alternate(messages, encryption, ctx.repeats);
  const ours = (text.encrypted / n) * 1000;
  const base = (text.plain / n) * 1000;
  const m = ctx.quick ? 50 : 300;
  const images = Array.from({ length: m }, (_, i) => ({
    role: "user",
    content: [
      { type: "text", text: `screenshot ${i}` },
      { type: "image", data: imageBytes(5000 + i, 200_000).toString("base64"), mimeType: "image/png" },
    ],
  }));
  const image = await alternate(images, encryption, ctx.repeats);
  const oursImage = (image.encrypted / m) * 1000;
  const baseImage = (image.plain / m) * 1000;
  return [
    {
      scenario: "append, encrypted (no fsync)",
      unit: "µs/append",
      ours,
      baseline: base,
      baselineName: "plain appends",
      ratio: ours / base,
      target: "≤ 2×",
      met: ours / base <= 2,
      extra: { appends: n },
    },
    {
      scenario: "append of a 200 KB image, encrypted (keyed blob, no fsync)",
      unit: "µs/append",
      ours: oursImage,
      baseline: baseImage,
      baselineName: "plain image appends (sha256 blob)",
      ratio: oursImage / baseImage,
      target: "≤ 2×",
      met: oursImage / baseImage <= 2,
      extra: { appends: m, imageKB: 200 },
    },
  ];
}
