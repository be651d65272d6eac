// The speed issue's append workloads (W1, W2), each against plain Node in the same run: one kept
// fd + `JSON.stringify` + `writeSync` per entry, the entry built like ours (type, id, parentId,
// timestamp, message).
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "../../src/session/session-manager.ts";
import { median, quantile } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { agentMessage, imageBytes, prng } from "../workload.ts";

type Message = { role: string; [key: string]: unknown };

/** Per-entry latencies (ms) of the baseline and of `appendMessage`, same messages, same order. */
async function latencies(messages: Message[]): Promise<{ base: number[]; ours: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), "ts-bench-shapes-"));
  try {
    const fd = openSync(join(dir, "baseline.jsonl"), "a");
    const base: number[] = new Array(messages.length);
    let parent: string | null = null;
    for (let i = 0; i < messages.length; i++) {
      const t = performance.now();
      const id = (0x10000000 + i).toString(16);
      const line = JSON.stringify({ type: "message", id, parentId: parent, timestamp: new Date().toISOString(), message: messages[i] });
      writeSync(fd, `${line}\n`);
      parent = id;
      base[i] = performance.now() - t;
    }
    closeSync(fd);
    const manager = await SessionManager.create(join(dir, "cwd"), { root: dir });
    const ours: number[] = new Array(messages.length);
    for (let i = 0; i < messages.length; i++) {
      const t = performance.now();
      manager.appendMessage(messages[i]!);
      ours[i] = performance.now() - t;
    }
    await manager.close();
    return { base, ours };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

function row(scenario: string, unit: string, ours: number, base: number, baselineName: string, limit: number): BenchRow {
  return { scenario, unit, ours, baseline: base, baselineName, ratio: ours / base, target: `≤ ${limit}×`, met: ours / base <= limit };
}

/** A user message of about `chars` characters of text. */
function textMessage(random: () => number, i: number, chars: number): Message {
  return agentMessage(random, i * 3, chars) as Message;
}

/** A user message with a ~300 KB base64 PNG (225 KB of bytes), a different image each time. */
function imageMessage(i: number): Message {
  const data = imageBytes(1000 + i, 225 * 1024).toString("base64");
  return {
    role: "user",
    content: [
      { type: "text", text: "what is on this screenshot?" },
      { type: "image", data, mimeType: "image/png" },
    ],
  };
}

export async function benchAppendShapes(ctx: BenchContext): Promise<BenchRow[]> {
  const w1Count = ctx.quick ? 2000 : 20_000;
  const random = prng(9);
  const w1 = Array.from({ length: w1Count }, (_, i) => agentMessage(random, i, 9000) as Message);
  const texts = Array.from({ length: 2000 }, (_, i) => textMessage(random, i, 1500));
  const images = Array.from({ length: ctx.quick ? 20 : 60 }, (_, i) => imageMessage(i));
  await latencies(texts.slice(0, 300)); // warm-up
  await latencies(images.slice(0, 5));
  type Pair = { base: number; ours: number };
  const runs = { w1: [] as Pair[], text: [] as Pair[], image: [] as Pair[] };
  for (let r = 0; r < ctx.repeats; r++) {
    const a = await latencies(w1);
    runs.w1.push({ base: sum(a.base), ours: sum(a.ours) });
    const t = await latencies(texts);
    runs.text.push({ base: quantile(t.base, 0.5), ours: quantile(t.ours, 0.5) });
    const m = await latencies(images);
    runs.image.push({ base: quantile(m.base, 0.5), ours: quantile(m.ours, 0.5) });
  }
  const med = (list: Pair[], scale: number) => ({
    base: median(list.map((x) => x.base * scale)),
    ours: median(list.map((x) => x.ours * scale)),
  });
  const w1m = med(runs.w1, 1);
  const textm = med(runs.text, 1000);
  const imagem = med(runs.image, 1000);
  return [
    row(`W1: ${w1Count} appends of ~9 KB messages, total`, "ms", w1m.ours, w1m.base, "stringify+writeSync", 1.15),
    row("W2: text entry (~1.5 KB) p50", "µs", textm.ours, textm.base, "stringify+writeSync", 1.15),
    row("W2: image entry (300 KB base64 PNG) p50", "µs", imagem.ours, imagem.base, "stringify+writeSync of it inline", 0.8),
  ];
}
