import { closeSync, linkSync, mkdirSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "../../src/session/session-manager.ts";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { agentMessage, imageBytes, prng } from "../workload.ts";

/** Raw fork of a session file: a new header line, then the body copied in 1 MB chunks. */
function rawFileFork(source: string, target: string): void {
  const input = openSync(source, "r");
  const output = openSync(target, "wx", 0o600);
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    let n = readSync(input, buffer, 0, buffer.length, 0);
    const nl = buffer.subarray(0, n).indexOf(0x0a);
    const header = JSON.parse(buffer.subarray(0, nl).toString("utf8"));
    writeSync(output, `${JSON.stringify({ ...header, id: `fork-${target.length}`, parentSession: header.id })}\n`);
    let position = nl + 1;
    for (;;) {
      n = readSync(input, buffer, 0, buffer.length, position);
      if (n === 0) break;
      writeSync(output, buffer, 0, n);
      position += n;
    }
  } finally {
    closeSync(input);
    closeSync(output);
  }
}

/** Raw copy of an artifacts directory: one hard link per file. */
function rawLinkTree(source: string, target: string): void {
  mkdirSync(target, { recursive: true, mode: 0o700 });
  for (const name of readdirSync(source)) linkSync(join(source, name), join(target, name));
}

async function timeForks(
  m: SessionManager,
  root: string,
  repeats: number,
  baseline: (i: number) => void,
): Promise<{ ours: number; base: number }> {
  const ours: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < repeats + 1; i++) {
    let t = performance.now();
    baseline(i);
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
  rmSync(join(root, "raw"), { recursive: true, force: true });
  return { ours: median(ours), base: median(base) };
}

/** W6: forking a 10 MB session (file only), and a session with a 50 MB / 200-file artifacts dir. */
export async function benchFork(ctx: BenchContext): Promise<BenchRow[]> {
  const root = mkdtempSync(join(tmpdir(), "ts-bench-fork-"));
  try {
    const random = prng(9);
    const rows: BenchRow[] = [];
    const big = await SessionManager.create(join(root, "big"), { root });
    const messages = ctx.quick ? 1000 : 5000;
    for (let i = 0; i < messages; i++) big.appendMessage(agentMessage(random, i, 2048) as { role: string });
    mkdirSync(join(root, "raw"), { recursive: true });
    const file = await timeForks(big, root, ctx.repeats, (i) => rawFileFork(big.sessionFile!, join(root, "raw", `f${i}.jsonl`)));
    await big.close();
    rows.push({
      scenario: `fork a ${ctx.quick ? 2 : 10} MB session (file only)`,
      unit: "ms",
      ours: file.ours,
      baseline: file.base,
      baselineName: "header + chunk copy",
      ratio: file.ours / file.base,
      target: "≤ 3×",
      met: file.ours / file.base <= 3,
    });

    const m = await SessionManager.create(join(root, "proj"), { root });
    for (let i = 0; i < 20; i++) m.appendMessage(agentMessage(random, i, 1500) as { role: string });
    for (let i = 0; i < 200; i++) m.artifacts!.save(imageBytes(i, 250_000).toString("latin1"), { toolType: "bash" });
    mkdirSync(join(root, "raw"), { recursive: true });
    const dir = await timeForks(m, root, ctx.repeats, (i) => rawLinkTree(m.artifactsDir!, join(root, "raw", `d${i}`)));
    await m.close();
    rows.push({
      scenario: "fork with a 50 MB / 200-file artifacts dir",
      unit: "ms",
      ours: dir.ours,
      baseline: dir.base,
      baselineName: "hard link per file",
      ratio: dir.ours / dir.base,
      target: "≤ 2×",
      met: dir.ours / dir.base <= 2,
    });
    return rows;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
