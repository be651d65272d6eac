// The seeded W1–W6 workloads of `npm run bench:peers` (issue 14), shared by the parent and every child.
// Runs on Node and on Bun: only node: built-ins and bench/workload.ts, no clock, no Math.random.
import { createHash } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { agentMessage, imageBytes, prng } from "../workload.ts";

export const WORKLOADS = ["W1", "W2", "W3", "W4", "W4B", "W5", "W6"] as const;
export type Workload = (typeof WORKLOADS)[number];

/** What one child is asked to do: the workload, its sizes, and where its inputs and scratch space are. */
export interface Job {
  workload: Workload | "W6-artifacts";
  /** An empty directory the child owns (sessions it creates, copies it opens). */
  work: string;
  /** W1 appends, W2 entries of each kind, W5 sessions, W6-artifacts files. */
  count: number;
  /** W3/W4: the session file to open (the child opens its own copy); W5: the bucket dir; W6: the source. */
  source?: string;
  /** W5: the cwd whose sessions are listed. */
  cwd?: string;
  /** W4B: the directory of blob files (named by their sha256) the session's refs point at. */
  blobs?: string;
  /** W4, ours only: how images are loaded. */
  mode?: "lazy" | "eager";
}

/** One child's answer. Durations in ms unless named otherwise; rssMB is the process's peak RSS. */
export interface Result {
  ms?: number;
  imageP50Us?: number;
  textP50Us?: number;
  rssMB?: number;
  /** W3/W4: entries loaded (the header not counted), to check every peer loaded the same session. */
  entries?: number;
  /** The peer has no API for this workload: why. */
  unsupported?: string;
}

/** Sizes at `--scale 1` (issue 14); `scale` shrinks them for a quick run. */
export function sizes(scale: number) {
  const n = (v: number, min: number) => Math.max(min, Math.round(v * scale));
  return {
    w1Appends: n(20_000, 100),
    w2Entries: n(200, 10),
    w3Bytes: n(100e6, 1e6),
    w4Bytes: n(300e6, 3e6),
    w5Sessions: n(2000, 20),
    w6Bytes: n(10e6, 1e5),
    w6Files: n(200, 4),
  };
}

export const CWD = "/srv/bench/peers-project";
export const ARTIFACT_BYTES = 250_000;
const T0 = 1_750_000_000_000;

/** A full pi-ai usage record: omp sums `usage.cost.total` on load and on append. */
function usage() {
  return {
    input: 1200,
    output: 300,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 1500,
    cost: { input: 0.0036, output: 0.0045, cacheRead: 0, cacheWrite: 0, total: 0.0081 },
  };
}

/** One agent message of roughly `size` bytes (user text, assistant thinking + tool call, tool result), valid for pi and omp. */
export function peerMessage(random: () => number, i: number, size: number): Record<string, unknown> {
  const m = agentMessage(random, i, size);
  if (m.role === "assistant") Object.assign(m, { api: "anthropic-messages", provider: "anthropic", usage: usage() });
  return m;
}

/**
 * W1: `count` messages averaging ~9 KB (user 10.5 KB, assistant ~6 KB, tool result 10.5 KB). Passed through
 * JSON once, as messages from a provider are: the generator's concatenated strings would otherwise be flattened
 * by whichever JSON.stringify meets them first, inside the timed loop.
 */
export function w1Messages(count: number): Record<string, unknown>[] {
  const random = prng(14);
  return JSON.parse(JSON.stringify(Array.from({ length: count }, (_, i) => peerMessage(random, i, 10_500))));
}

/** W2: `count` user entries each with a distinct 300 KB base64 PNG, and `count` ~150 B user text entries. */
export function w2Entries(count: number): { images: Record<string, unknown>[]; texts: Record<string, unknown>[] } {
  const images = Array.from({ length: count }, (_, i) => ({
    role: "user",
    content: [
      { type: "text", text: `screenshot ${i}` },
      { type: "image", data: imageBytes(1400 + i, 225_000).toString("base64"), mimeType: "image/png" },
    ],
    timestamp: T0 + i,
  }));
  const texts = Array.from({ length: count }, (_, i) => ({
    role: "user",
    content: [{ type: "text", text: `please run the tests again and tell me which assertion fails now (${i}), then fix it` }],
    timestamp: T0 + i,
  }));
  return { images, texts };
}

/** The opening pair every append workload starts from (pi and omp write nothing before an assistant message). */
export function openingPair(): Record<string, unknown>[] {
  const random = prng(15);
  return JSON.parse(JSON.stringify([peerMessage(random, 0, 200), peerMessage(random, 1, 200)]));
}

/** W6-artifacts: the seeded text of artifact `i` (ARTIFACT_BYTES of ASCII). */
export function artifactText(i: number): string {
  return imageBytes(1600 + i, (ARTIFACT_BYTES * 3) / 4).toString("base64");
}

function header(id: string): string {
  return `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2025-06-01T00:00:00.000Z", cwd: CWD })}\n`;
}

/** Writes a v3 session of about `bytes` bytes; `line(i)` gives the i-th message. Entries chain by parentId. */
function writeV3(path: string, bytes: number, id: string, line: (i: number) => Record<string, unknown>): void {
  const fd = openSync(path, "w");
  try {
    let written = writeSync(fd, header(id));
    let parent: string | null = null;
    for (let i = 0; written < bytes; i++) {
      const eid = (0x10000000 + i).toString(16);
      const record = { type: "message", id: eid, parentId: parent, timestamp: "2025-06-01T00:00:01.000Z", message: line(i) };
      written += writeSync(fd, `${JSON.stringify(record)}\n`);
      parent = eid;
    }
  } finally {
    closeSync(fd);
  }
}

/** W3/W6: a v3 text session of about `bytes` bytes (tool results of 1–50 KB). */
export function writeTextSession(path: string, bytes: number, seed: number): void {
  const random = prng(seed);
  const size = (i: number) => (i % 3 === 2 ? 1024 + Math.floor(random() * 49 * 1024) : 2048);
  writeV3(path, bytes, `0190a000-0000-7000-8000-${String(seed).padStart(12, "0")}`, (i) => peerMessage(random, i, size(i)));
}

/** W4: a v3 session of about `bytes` bytes where every other message is a user turn with a 1–2.5 MB inline base64 PNG. */
export function writeImageSession(path: string, bytes: number, seed: number): void {
  const random = prng(seed);
  writeV3(path, bytes, `0190b000-0000-7000-8000-${String(seed).padStart(12, "0")}`, (i) => {
    if (i % 2 === 1) return peerMessage(random, 1, 1024);
    const data = imageBytes(seed * 100_000 + i, 750_000 + Math.floor(random() * 1_125_000)).toString("base64");
    return {
      role: "user",
      content: [
        { type: "text", text: `screenshot ${i}` },
        { type: "image", data, mimeType: "image/png" },
      ],
      timestamp: T0 + i,
    };
  });
}

/**
 * W4b: the W4 session with every image already externalized, as omp and we store them: each image's bytes in
 * `blobDir/<sha256>` and `data` replaced by `blob:sha256:<hash>`. Opening it eagerly reads every blob back.
 */
export function writeBlobRefSession(imageSession: string, target: string, blobDir: string): void {
  mkdirSync(blobDir, { recursive: true });
  const out = openSync(target, "w");
  try {
    const text = readFileSync(imageSession);
    for (let start = 0, nl = text.indexOf(10); nl !== -1; start = nl + 1, nl = text.indexOf(10, start)) {
      const record = JSON.parse(text.toString("utf8", start, nl));
      for (const block of record.message?.content ?? []) {
        if (block.type !== "image") continue;
        const bytes = Buffer.from(block.data, "base64");
        const hash = createHash("sha256").update(bytes).digest("hex");
        writeFileSync(join(blobDir, hash), bytes);
        block.data = `blob:sha256:${hash}`;
      }
      writeSync(out, `${JSON.stringify(record)}\n`);
    }
  } finally {
    closeSync(out);
  }
}

/** W5: `count` small sessions (header + 6 messages) in one bucket directory, distinct mtimes not needed. */
export function writeBucket(bucket: string, count: number): void {
  const random = prng(16);
  mkdirSync(bucket, { recursive: true });
  for (let n = 0; n < count; n++) {
    const id = `0197b000-0000-7000-8000-${String(n).padStart(12, "0")}`;
    const lines = [header(id)];
    let parent: string | null = null;
    for (let k = 0; k < 6; k++) {
      const eid = (0x10000000 + k).toString(16);
      const record = {
        type: "message",
        id: eid,
        parentId: parent,
        timestamp: "2025-01-01T00:00:00.000Z",
        message: peerMessage(random, k, 600),
      };
      lines.push(`${JSON.stringify(record)}\n`);
      parent = eid;
    }
    const stamp = new Date(Date.UTC(2025, 0, 1) + n * 1000).toISOString().replace(/[:.]/g, "-");
    writeFileSync(join(bucket, `${stamp}_${id}.jsonl`), lines.join(""));
  }
}
