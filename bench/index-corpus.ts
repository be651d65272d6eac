// A seeded corpus of pi v3 sessions shaped like real ones (the mix of /work/shared/real-sessions: about
// 40% of the bytes message text and thinking, 20% tool-call arguments, the rest tool results, usage,
// ids and signatures), for the index bench. Session sizes are long-tailed (log-normal): most are small,
// a few are tens of megabytes. Images are blob refs (the store externalizes them). Same seed, same bytes.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { prng } from "./workload.ts";

/** Phrases sprinkled into the texts so phrase queries have real hits. */
export const STOCK_PHRASES = [
  "cannot find module",
  "permission denied",
  "the build failed with exit code",
  "undefined is not a function",
  "connection refused",
  "out of memory",
  "merge conflict in",
  "tests passed",
  "segmentation fault",
  "deadline exceeded",
];

const TOOLS = ["read", "bash", "edit", "write", "grep"];
const MODELS = ["claude-sonnet-4-5", "gpt-5.1-codex", "claude-opus-4-1", "gemini-2.5-pro"];

/** A vocabulary of pseudo-words; texts draw them with a Zipf-like skew (few common, many rare). */
export function vocabulary(seed: number, size: number): string[] {
  const random = prng(seed);
  const letters = "abcdefghijklmnopqrstuvwxyz";
  const words = new Set<string>();
  while (words.size < size) {
    let w = "";
    const n = 3 + Math.floor(random() * 8);
    for (let i = 0; i < n; i++) w += letters[Math.floor(random() * 26)];
    words.add(w);
  }
  return [...words];
}

/** What `writeIndexCorpus` wrote. */
export interface IndexCorpus {
  sessionsDir: string;
  paths: string[];
  bytes: number;
  /** The cwd of each bucket directory (`/w/<n>`). */
  cwds: string[];
}

class Writer {
  private readonly random: () => number;
  private clock = Date.UTC(2026, 0, 1);

  constructor(
    seed: number,
    private readonly words: string[],
  ) {
    this.random = prng(seed);
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  private word(): string {
    return this.words[Math.floor(this.words.length * this.random() ** 3)]!;
  }

  /** Prose: words, some punctuation, now and then a stock phrase. */
  prose(chars: number): string {
    let out = "";
    while (out.length < chars) {
      const r = this.random();
      if (r < 0.004) out += `${this.pick(STOCK_PHRASES)} `;
      else out += this.word() + (r < 0.06 ? ".\n" : r < 0.12 ? ", " : " ");
    }
    return out;
  }

  /** Code-like output: identifiers, calls and numbers, line by line. */
  code(chars: number): string {
    let out = "";
    while (out.length < chars) {
      const r = this.random();
      if (r < 0.3) out += `  const ${this.word()}_${this.word()} = ${this.word()}(${Math.floor(this.random() * 1000)});\n`;
      else if (r < 0.5) out += `${this.word()}/${this.word()}.ts:${Math.floor(this.random() * 900)}: ${this.prose(40)}\n`;
      else if (r < 0.503) out += `Error: ${this.pick(STOCK_PHRASES)} '${this.word()}'\n`;
      else out += `  ${this.prose(30 + this.random() * 60).trimEnd()}\n`;
    }
    return out;
  }

  private hex(n: number): string {
    let out = "";
    while (out.length < n)
      out += Math.floor(this.random() * 0x100000000)
        .toString(16)
        .padStart(8, "0");
    return out.slice(0, n);
  }

  private base64(n: number): string {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let out = "";
    for (let i = 0; i < n; i++) out += alphabet[Math.floor(this.random() * 64)];
    return out;
  }

  /** A long-tailed length: log-normal around `median`, capped at `max`. */
  tail(median: number, sigma: number, max: number): number {
    const u = Math.max(1e-9, this.random());
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.random());
    return Math.min(max, Math.max(16, Math.round(median * Math.exp(sigma * z))));
  }

  private line(parent: string | null, body: Record<string, unknown>): { id: string; text: string } {
    this.clock += 1000 + Math.floor(this.random() * 20_000);
    const id = this.hex(8);
    const timestamp = new Date(this.clock).toISOString();
    return { id, text: `${JSON.stringify({ ...body, id, parentId: parent, timestamp })}\n` };
  }

  private usage(): Record<string, unknown> {
    const input = Math.floor(this.random() * 5000);
    const output = Math.floor(this.random() * 2000);
    const cacheRead = Math.floor(this.random() * 80_000);
    const cost = { input: input * 3e-6, output: output * 15e-6, cacheRead: cacheRead * 3e-7, cacheWrite: 0 };
    return {
      input,
      output,
      cacheRead,
      cacheWrite: 0,
      totalTokens: input + output + cacheRead,
      cost: { ...cost, total: cost.input + cost.output },
    };
  }

  /** One turn's lines: user → (assistant → tool result)* → assistant. */
  turn(cwd: string, model: string, parent: string | null): { lines: string[]; last: string } {
    const lines: string[] = [];
    const push = (l: { id: string; text: string }) => {
      lines.push(l.text);
      return l.id;
    };
    const userContent: unknown[] = [{ type: "text", text: this.prose(this.tail(200, 1, 6000)) }];
    if (this.random() < 0.03) userContent.push({ type: "image", data: `blob:sha256:${this.hex(64)}`, mimeType: "image/png" });
    let last = push(this.line(parent, { type: "message", message: { role: "user", content: userContent, timestamp: this.clock } }));
    const rounds = 1 + Math.floor(this.random() * 5);
    for (let r = 0; r <= rounds; r++) {
      const content: Record<string, unknown>[] = [];
      if (this.random() < 0.6)
        content.push({ type: "thinking", thinking: this.prose(this.tail(300, 1, 8000)), thinkingSignature: this.base64(400) });
      content.push({ type: "text", text: this.prose(this.tail(150, 1.2, 8000)) });
      const final = r === rounds;
      const tool = this.pick(TOOLS);
      const callId = `toolu_${this.hex(24)}`;
      if (!final) {
        const path = `${cwd}/src/${this.word()}/${this.word()}.ts`;
        const args =
          tool === "bash"
            ? { command: `${this.word()} --${this.word()} ${path}` }
            : tool === "edit" || tool === "write"
              ? { path, oldText: this.code(this.tail(200, 1, 4000)), newText: this.code(this.tail(250, 1, 4000)) }
              : tool === "grep"
                ? { pattern: this.word(), path }
                : { path };
        content.push({ type: "toolCall", id: callId, name: tool, arguments: args });
      }
      const message = {
        role: "assistant",
        content,
        api: "anthropic-messages",
        provider: "anthropic",
        model,
        usage: this.usage(),
        stopReason: final ? "stop" : "toolUse",
        timestamp: this.clock,
      };
      last = push(this.line(last, { type: "message", message }));
      if (final) break;
      const output = tool === "read" || tool === "bash" ? this.code(this.tail(1500, 1.4, 120_000)) : this.prose(this.tail(60, 0.5, 400));
      const result = { role: "toolResult", toolCallId: callId, toolName: tool, content: [{ type: "text", text: output }], isError: false };
      last = push(this.line(last, { type: "message", message: { ...result, timestamp: this.clock } }));
    }
    return { lines, last };
  }

  /** One session of about `target` bytes: header, model change, then whole turns. */
  session(id: string, cwd: string, target: number): string {
    const model = this.pick(MODELS);
    const parts = [`${JSON.stringify({ type: "session", version: 3, id, timestamp: new Date(this.clock).toISOString(), cwd })}\n`];
    const change = this.line(null, { type: "model_change", provider: "anthropic", modelId: model });
    parts.push(change.text);
    let bytes = parts[0]!.length + change.text.length;
    let parent = change.id;
    while (bytes < target) {
      const { lines, last } = this.turn(cwd, model, parent);
      for (const l of lines) {
        parts.push(l);
        bytes += l.length;
      }
      parent = last;
    }
    return parts.join("");
  }
}

/** `count` entry lines as an agent appends them (whole turns, cut at `count`), for catch-up benches. */
export function appendedLines(words: string[], count: number, seed = 11): string[] {
  const writer = new Writer(seed, words);
  const lines: string[] = [];
  let parent: string | null = null;
  while (lines.length < count) {
    const turn = writer.turn("/w/0", "claude-sonnet-4-5", parent);
    lines.push(...turn.lines);
    parent = turn.last;
  }
  return lines.slice(0, count);
}

/**
 * Writes `sessions` session files under `dir` (50 cwd buckets, pi's layout), their sizes long-tailed
 * around a mean of `meanBytes` (log-normal, sigma 1.2, capped at 40× the mean).
 */
export function writeIndexCorpus(dir: string, sessions: number, meanBytes: number, words: string[], seed = 7): IndexCorpus {
  const writer = new Writer(seed, words);
  const sessionsDir = join(dir, "sessions");
  const sigma = 1.2;
  const median = meanBytes / Math.exp((sigma * sigma) / 2);
  const paths: string[] = [];
  const cwds: string[] = [];
  let bytes = 0;
  for (let b = 0; b < 50; b++) cwds.push(`/w/${b}`);
  for (let s = 0; s < sessions; s++) {
    const bucket = join(sessionsDir, `--w-${s % 50}--`);
    if (s < 50) mkdirSync(bucket, { recursive: true });
    const id = `${s.toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`;
    const body = writer.session(id, cwds[s % 50]!, writer.tail(median, sigma, meanBytes * 40));
    const path = join(bucket, `2026-01-01T00-00-00-000Z_${id}.jsonl`);
    writeFileSync(path, body);
    paths.push(path);
    bytes += Buffer.byteLength(body);
  }
  return { sessionsDir, paths, bytes, cwds };
}
