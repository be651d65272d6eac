import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { prng } from "../fixtures/seeded.ts";

export { prng };

const WORDS = [
  "the agent reads file src index ts and runs npm test then fixes the failing assertion",
  "in session manager because the torn tail was merged into the next append",
]
  .join(" ")
  .split(" ");

function text(random: () => number, chars: number): string {
  let out = "";
  while (out.length < chars) out += WORDS[Math.floor(random() * WORDS.length)]! + (random() < 0.1 ? "\n" : " ");
  return out.slice(0, chars);
}

/** One coding-agent message of roughly `size` bytes: user text, assistant with thinking + tool call, or tool result. */
export function agentMessage(random: () => number, i: number, size = 2048): Record<string, unknown> {
  switch (i % 3) {
    case 0:
      return { role: "user", content: [{ type: "text", text: text(random, size) }], timestamp: 1_750_000_000_000 + i };
    case 1:
      return {
        role: "assistant",
        content: [
          { type: "thinking", thinking: text(random, Math.floor(size / 2)), thinkingSignature: text(random, 300) },
          { type: "toolCall", id: `toolu_${i}`, name: "bash", arguments: { command: text(random, 80) } },
        ],
        model: "claude-sonnet-4-5",
        usage: { input: 1200, output: 300 },
        stopReason: "toolUse",
        timestamp: 1_750_000_000_000 + i,
      };
    default:
      return {
        role: "toolResult",
        toolCallId: `toolu_${i - 1}`,
        toolName: "bash",
        content: [{ type: "text", text: text(random, size) }],
        isError: false,
        timestamp: 1_750_000_000_000 + i,
      };
  }
}

/** Writes a v3 text session of about `bytes` bytes with tool results of 1–50 KB. Returns the entry count. */
export function writeTextSession(path: string, bytes: number, seed = 1): number {
  const random = prng(seed);
  const fd = openSync(path, "w");
  let written = 0;
  let count = 0;
  let parent: string | null = null;
  try {
    const headerRecord = {
      type: "session",
      version: 3,
      id: "0190a000-0000-7000-8000-00000000bench",
      timestamp: "2025-06-01T00:00:00.000Z",
      cwd: "/home/u/project",
    };
    const header = `${JSON.stringify(headerRecord)}\n`;
    writeSync(fd, header);
    written += header.length;
    while (written < bytes) {
      const id = (0x10000000 + count).toString(16);
      const size = count % 3 === 2 ? 1024 + Math.floor(random() * 49 * 1024) : 2048;
      const record = {
        type: "message",
        id,
        parentId: parent,
        timestamp: "2025-06-01T00:00:01.000Z",
        message: agentMessage(random, count, size),
      };
      const line = `${JSON.stringify(record)}\n`;
      writeSync(fd, line);
      written += Buffer.byteLength(line);
      parent = id;
      count++;
    }
  } finally {
    closeSync(fd);
  }
  return count;
}

/** Deterministic image-like bytes (a PNG signature, then a seeded keystream). */
export function imageBytes(seed: number, size: number): Buffer {
  const random = prng(seed);
  const out = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i += 4) out.writeUInt32LE(Math.floor(random() * 0x100000000) >>> 0, Math.min(i, size - 4));
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(out);
  return out;
}

/**
 * Writes a pi v1 session shaped like pi#9613: user messages each carrying one inline base64 image
 * of 1–2.5 MB, with assistant replies between them, until the file holds about `bytes` bytes.
 */
export function writeImageHeavyLegacy(path: string, bytes: number, seed = 1): { images: number; imageBytes: number } {
  const random = prng(seed);
  const fd = openSync(path, "w");
  let written = 0;
  let images = 0;
  let total = 0;
  try {
    const headerRecord = { type: "session", id: `bench-legacy-${seed}`, timestamp: "2025-06-01T00:00:00.000Z", cwd: "/home/u/screens" };
    const header = `${JSON.stringify(headerRecord)}\n`;
    writeSync(fd, header);
    written += header.length;
    while (written < bytes) {
      const size = 750_000 + Math.floor(random() * 1_125_000); // 1–2.5 MB of base64
      const data = imageBytes(seed * 100_000 + images, size).toString("base64");
      const user = `${JSON.stringify({
        type: "message",
        timestamp: "2025-06-01T00:00:01.000Z",
        message: {
          role: "user",
          content: [
            { type: "text", text: `screenshot ${images}` },
            { type: "image", data, mimeType: "image/png" },
          ],
        },
      })}\n`;
      const replyRecord = { type: "message", timestamp: "2025-06-01T00:00:02.000Z", message: agentMessage(random, 1, 1024) };
      const reply = `${JSON.stringify(replyRecord)}\n`;
      writeSync(fd, user);
      writeSync(fd, reply);
      written += user.length + reply.length;
      images++;
      total += size;
    }
  } finally {
    closeSync(fd);
  }
  return { images, imageBytes: total };
}

/**
 * Writes `perBucket` small sessions (header + 6 messages) into each of `cwds`' buckets under
 * `sessionsDir`, pi/omp layout (cwd `/home/u/x` → bucket `-home-u-x` style via `bucketOf`).
 */
export function writeSessionTree(
  sessionsDir: string,
  cwds: string[],
  perBucket: number,
  bucketOf: (cwd: string) => string,
  seed = 5,
): number {
  const random = prng(seed);
  let n = 0;
  for (const cwd of cwds) {
    const bucket = join(sessionsDir, bucketOf(cwd));
    mkdirSync(bucket, { recursive: true });
    for (let i = 0; i < perBucket; i++, n++) {
      const id = `0197b000-0000-7000-8000-${String(n).padStart(12, "0")}`;
      const lines = [
        JSON.stringify({ type: "session", version: 3, id, timestamp: new Date(Date.UTC(2025, 0, 1) + n * 1000).toISOString(), cwd }),
      ];
      let parent: string | null = null;
      for (let k = 0; k < 6; k++) {
        const eid = (0x10000000 + k).toString(16);
        lines.push(
          JSON.stringify({
            type: "message",
            id: eid,
            parentId: parent,
            timestamp: "2025-01-01T00:00:00.000Z",
            message: agentMessage(random, k, 600),
          }),
        );
        parent = eid;
      }
      writeFileSync(join(bucket, `2025-01-01T00-00-00-000Z_${id}.jsonl`), `${lines.join("\n")}\n`);
    }
  }
  return n;
}
