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

/** Median times of `forkFrom` alone, of `forkFrom` + the first read of its entries, and of open read-only + fork (its old path). */
async function timeForkFroms(source: string, root: string, repeats: number, raw: (i: number) => void) {
  const runs = { raw: [] as number[], alone: [] as number[], read: [] as number[], openFork: [] as number[] };
  for (let i = 0; i < repeats + 1; i++) {
    let t = performance.now();
    raw(i);
    const r = performance.now() - t;
    t = performance.now();
    const alone = await SessionManager.forkFrom(source, join(root, "from"), { root });
    const a = performance.now() - t;
    await alone.close();
    t = performance.now();
    const read = await SessionManager.forkFrom(source, join(root, "from"), { root });
    read.getEntries();
    const b = performance.now() - t;
    await read.close();
    t = performance.now();
    const opened = await SessionManager.open(source, { root, readOnly: true });
    const forked = await opened.fork({ cwd: join(root, "from") });
    forked.getEntries();
    await opened.close();
    const c = performance.now() - t;
    await forked.close();
    if (i === 0) continue;
    runs.raw.push(r);
    runs.alone.push(a);
    runs.read.push(b);
    runs.openFork.push(c);
  }
  rmSync(join(root, "raw"), { recursive: true, force: true });
  return { raw: median(runs.raw), alone: median(runs.alone), read: median(runs.read), openFork: median(runs.openFork) };
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
    mkdirSync(join(root, "raw"), { recursive: true });
    const from = await timeForkFroms(big.sessionFile!, root, ctx.repeats, (i) =>
      rawFileFork(big.sessionFile!, join(root, "raw", `g${i}.jsonl`)),
    );
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
    const mb = ctx.quick ? 2 : 10;
    rows.push({
      scenario: `forkFrom a ${mb} MB session file (not opened)`,
      unit: "ms",
      ours: from.alone,
      baseline: from.raw,
      baselineName: "header + chunk copy",
      ratio: from.alone / from.raw,
      target: "≤ 3×",
      met: from.alone / from.raw <= 3,
    });
    rows.push({
      scenario: `forkFrom a ${mb} MB session file, then its first getEntries()`,
      unit: "ms",
      ours: from.read,
      baseline: from.openFork,
      baselineName: "open read-only + fork (forkFrom before the byte copy)",
      ratio: from.read / from.openFork,
      target: "≤ 1.1×",
      met: from.read / from.openFork <= 1.1,
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
