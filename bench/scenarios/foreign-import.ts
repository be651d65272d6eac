import { createReadStream, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { importClaudeCode } from "../../src/interchange/import-foreign.ts";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { prng } from "../workload.ts";

const SID = "7d3e2c1b-0000-4000-8000-00000000be0c";

function words(random: () => number, chars: number): string {
  let out = "";
  while (out.length < chars) out += `${Math.floor(random() * 1e6).toString(36)}${random() < 0.1 ? "\n" : " "}`;
  return out.slice(0, chars);
}

/** A seeded Claude Code transcript of about `bytes`: prompt → tool call → tool result → answer, over and over. */
export function writeClaudeCodeTranscript(path: string, bytes: number, seed: number): void {
  const random = prng(seed);
  const lines: string[] = [];
  let size = 0;
  let parent: string | null = null;
  for (let i = 0; size < bytes; i++) {
    const uuid = `00000000-0000-4000-8000-${i.toString(16).padStart(12, "0")}`;
    const common = {
      parentUuid: parent,
      isSidechain: false,
      userType: "external",
      cwd: "/home/bench/p",
      sessionId: SID,
      version: "2.1.39",
    };
    const at = new Date(1_760_000_000_000 + i * 1000).toISOString();
    let record: Record<string, unknown>;
    switch (i % 4) {
      case 0:
        record = { ...common, type: "user", message: { role: "user", content: words(random, 400) }, uuid, timestamp: at };
        break;
      case 1:
        record = {
          ...common,
          type: "assistant",
          message: {
            id: `msg_${i}`,
            role: "assistant",
            model: "claude-x",
            content: [{ type: "tool_use", id: `toolu_${i}`, name: "Bash", input: { command: words(random, 60) } }],
            usage: { input_tokens: 1000, output_tokens: 50 },
          },
          uuid,
          timestamp: at,
        };
        break;
      case 2: {
        const out = words(random, 3000);
        record = {
          ...common,
          type: "user",
          message: { role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${i - 1}`, content: out }] },
          toolUseResult: { stdout: out, stderr: "", interrupted: false },
          uuid,
          timestamp: at,
        };
        break;
      }
      default:
        record = {
          ...common,
          type: "assistant",
          message: { id: `msg_${i}`, role: "assistant", model: "claude-x", content: [{ type: "text", text: words(random, 600) }] },
          uuid,
          timestamp: at,
        };
    }
    const line = `${JSON.stringify(record)}\n`;
    lines.push(line);
    size += line.length;
    parent = uuid;
  }
  writeFileSync(path, lines.join(""));
}

async function readAndParse(path: string): Promise<number> {
  let n = 0;
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) if (JSON.parse(line)) n++;
  return n;
}

/** Importing a Claude Code transcript into the file store against reading it line by line and JSON.parse of every line. */
export async function benchForeignImport(ctx: BenchContext): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "ts-bench-foreign-"));
  try {
    const path = join(dir, `${SID}.jsonl`);
    writeClaudeCodeTranscript(path, ctx.quick ? 5e6 : ctx.sizeBytes, 25);
    const mb = statSync(path).size / 1e6;
    const ours: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < Math.max(1, Math.min(5, ctx.repeats)); i++) {
      let t = performance.now();
      await readAndParse(path);
      base.push(performance.now() - t);
      const root = join(dir, `store-${i}`);
      t = performance.now();
      const [report] = await importClaudeCode(path, { root });
      ours.push(performance.now() - t);
      if (report?.status !== "created") throw new Error(`bench import: ${report?.status}`);
      rmSync(root, { recursive: true, force: true });
    }
    const o = mb / (median(ours) / 1000);
    const b = mb / (median(base) / 1000);
    return [
      {
        scenario: `import Claude Code transcript (${mb.toFixed(0)} MB)`,
        unit: "MB/s",
        ours: o,
        baseline: b,
        baselineName: "read lines + JSON.parse",
        ratio: o / b,
        target: "≥ 0.2×",
        met: o / b >= 0.2,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
