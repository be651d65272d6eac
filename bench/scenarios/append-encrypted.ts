import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "../../src/session/session-manager.ts";
import type { SessionManagerOptions } from "../../src/session/session-options.ts";
import { median } from "../stats.ts";
import { agentMessage, prng } from "../workload.ts";
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

/** Appends of ~2 KB text entries to an encrypted session against plain appends, same messages, same run, alternating. */
export async function benchAppendEncrypted(ctx: BenchContext): Promise<BenchRow[]> {
  const n = ctx.quick ? 2000 : 20000;
  const random = prng(7);
  const messages = Array.from({ length: n }, (_, i) => agentMessage(random, i, 2048));
  const encryption = { key: randomBytes(32) };
  await appendAll(messages.slice(0, 500), {}); // warm-up
  await appendAll(messages.slice(0, 500), { encryption });
  const plain: number[] = [];
  const encrypted: number[] = [];
  for (let i = 0; i < ctx.repeats; i++) {
    // Alternating order: neither side always runs on a warmer (or busier) machine.
    if (i % 2 === 0) {
      plain.push(await appendAll(messages, {}));
      encrypted.push(await appendAll(messages, { encryption }));
    } else {
      encrypted.push(await appendAll(messages, { encryption }));
      plain.push(await appendAll(messages, {}));
    }
  }
  const ours = (median(encrypted) / n) * 1000;
  const base = (median(plain) / n) * 1000;
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
  ];
}
