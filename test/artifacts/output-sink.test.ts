import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { OutputSink } from "../../src/artifacts/output-sink.ts";
import type { StoreWarning } from "../../src/errors.ts";
import { injectFault } from "../support/fault.ts";
import { tempDir } from "../support/temp-dir.ts";

const WINDOW = 50 * 1024;

/** About 5 MB of lines mixing 1-, 2-, 3- and 4-byte characters. */
function bigStream(): Buffer {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < 5 * 1024 * 1024; i++) {
    const line = `line ${i} héllo wörld ✓ 😀 ${"x".repeat(i % 37)}\n`;
    lines.push(line);
    size += Buffer.byteLength(line);
  }
  return Buffer.from(lines.join(""), "utf8");
}

function chunksOf(buf: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let off = 0; off < buf.length; off += size) out.push(buf.subarray(off, off + size));
  return out;
}

const isContinuation = (b: number | undefined) => b !== undefined && (b & 0xc0) === 0x80;

function newStore(warnings?: StoreWarning[]) {
  return new ArtifactStore(join(tempDir("ts-art-"), "s"), { now: () => 0, onWarning: (w) => warnings?.push(w) });
}

describe("OutputSink (acceptance 8)", () => {
  it("a 5 MB stream with a 50 KiB window keeps a bounded tail and mirrors exactly the full stream", () => {
    const store = newStore();
    const stream = bigStream();
    const chunks = chunksOf(stream, 65_537);
    // the odd chunk size really does split multi-byte characters between chunks
    expect(chunks.some((c, i) => i > 0 && isContinuation(c[0]))).toBe(true);
    const live: string[] = [];
    const sink = new OutputSink({ artifacts: store, toolType: "bash", spillThreshold: WINDOW, onChunk: (t) => live.push(t) });
    let maxHeld = 0;
    for (const chunk of chunks) {
      sink.push(chunk);
      maxHeld = Math.max(maxHeld, (sink as unknown as { tailLength: number }).tailLength);
    }
    const summary = sink.dump();
    expect(maxHeld).toBeLessThanOrEqual(2 * WINDOW + 65_536 + 65_537);
    expect(summary.truncated).toBe(true);
    expect(summary.totalBytes).toBe(stream.length);
    expect(summary.totalLines).toBe(stream.toString("utf8").split("\n").length - 1);
    const out = Buffer.from(summary.output, "utf8");
    expect(out.length).toBeLessThanOrEqual(WINDOW);
    expect(out.length).toBeGreaterThan(WINDOW - 4);
    expect(out.equals(stream.subarray(stream.length - out.length))).toBe(true);
    expect(summary.output).not.toContain("\uFFFD");
    expect(summary.artifactId).toBe("0");
    const ref = store.getRef(summary.artifactId!)!;
    expect(ref.sizeBytes).toBe(stream.length);
    expect(readFileSync(ref.path).equals(stream)).toBe(true);
    expect(live.join("")).toBe(stream.toString("utf8"));
    expect(live.join("")).not.toContain("\uFFFD");
  });

  it("below the window: the whole output, not truncated, no artifact, no directory", () => {
    const store = newStore();
    const sink = new OutputSink({ artifacts: store, toolType: "bash" });
    sink.push("hello\n");
    sink.push(Buffer.from("wörld"));
    expect(sink.dump()).toEqual({ output: "hello\nwörld", truncated: false, totalBytes: 12, totalLines: 2 });
    expect(existsSync(store.dir)).toBe(false);
  });

  it("multi-byte characters split across chunks, even byte by byte, survive", () => {
    const text = "aé✓😀z\n";
    const sink = new OutputSink({ toolType: "bash", spillThreshold: 64 });
    const live: string[] = [];
    const withLive = new OutputSink({ toolType: "bash", onChunk: (t) => live.push(t) });
    for (const byte of Buffer.from(text)) {
      sink.push(Uint8Array.of(byte));
      withLive.push(Uint8Array.of(byte));
    }
    expect(sink.dump().output).toBe(text);
    withLive.dump();
    expect(live.join("")).toBe(text);
    expect(live.every((t) => !t.includes("\uFFFD"))).toBe(true);
  });

  it("cuts never split a character: tail and head windows land on character boundaries", () => {
    const store = newStore();
    const stream = Buffer.from("😀".repeat(100), "utf8"); // 400 bytes of 4-byte characters
    for (const window of [1, 2, 3, 5, 6, 7, 101]) {
      const sink = new OutputSink({ artifacts: store, toolType: "t", spillThreshold: window });
      sink.push(stream);
      const { output, truncated, artifactId } = sink.dump();
      expect(truncated).toBe(true);
      expect(output).toBe("😀".repeat(Math.floor(window / 4)));
      expect(readFileSync(store.getRef(artifactId!)!.path).equals(stream)).toBe(true);
    }
    const headed = new OutputSink({ toolType: "t", spillThreshold: 10, headBytes: 9 });
    headed.push(stream);
    expect(headed.dump().output).toBe(`😀😀\n\n[... 384 bytes omitted ...]\n\n😀😀`);
  });

  it("keeps head and tail with an omission marker when headBytes is set", () => {
    const store = newStore();
    const lines = Array.from({ length: 1000 }, (_, i) => `line ${String(i).padStart(4, "0")}\n`).join("");
    const sink = new OutputSink({ artifacts: store, toolType: "bash", spillThreshold: 30, headBytes: 20 });
    for (const chunk of chunksOf(Buffer.from(lines), 7)) sink.push(chunk);
    const summary = sink.dump();
    expect(summary.output).toBe(
      `line 0000\nline 0001\n\n\n[... ${lines.length - 50} bytes omitted ...]\n\nline 0997\nline 0998\nline 0999\n`,
    );
    expect(summary.totalLines).toBe(1000);
    expect(readFileSync(store.getRef(summary.artifactId!)!.path, "utf8")).toBe(lines);
  });

  it("caps long lines per column in memory while the artifact keeps them whole", () => {
    const store = newStore();
    const sink = new OutputSink({ artifacts: store, toolType: "bash", maxColumns: 8 });
    sink.push("short\n");
    sink.push("a very long line that");
    sink.push(" goes on and on\nok\n");
    const summary = sink.dump();
    expect(summary.output).toBe("short\na very l…\nok\n");
    expect(summary.truncated).toBe(true);
    expect(store.get(summary.artifactId!)).toBe("short\na very long line that goes on and on\nok\n");
  });

  it("a failing artifact write falls back to a correct bounded in-memory summary", () => {
    const warnings: StoreWarning[] = [];
    const store = newStore(warnings);
    const stream = bigStream().subarray(0, 300_000);
    const sink = new OutputSink({ artifacts: store, toolType: "bash", spillThreshold: 4096 });
    let writes = 0;
    const restore = injectFault("writeSync", () => (++writes === 5 ? "ENOSPC" : undefined));
    try {
      for (const chunk of chunksOf(stream, 1000)) sink.push(chunk);
    } finally {
      restore();
    }
    const summary = sink.dump();
    expect(writes).toBeGreaterThanOrEqual(5);
    expect(summary.artifactId).toBeUndefined();
    expect(summary.truncated).toBe(true);
    expect(summary.totalBytes).toBe(300_000);
    const out = Buffer.from(summary.output, "utf8");
    expect(out.length).toBeLessThanOrEqual(4096);
    expect(out.equals(stream.subarray(stream.length - out.length))).toBe(true);
    expect(warnings.map((w) => w.code)).toEqual(["PERSISTENCE_FAILED"]);
    // no half artifact, no temp file; the id handed to the mirror stays taken by its tombstone
    expect(store.list()).toEqual([]);
    expect(readdirSync(store.dir)).toEqual(["0.meta.json"]);
    expect(readFileSync(join(store.dir, "0.meta.json"), "utf8")).toBe('{"v":1,"id":"0","removed":true}\n');
  });

  it("a failure to open the artifact, or no store at all, still gives bounded output", () => {
    const store = newStore();
    const restore = injectFault("openSync", (_call, args) => (String(args[0]).endsWith(".tmp") ? "EACCES" : undefined));
    const sink = new OutputSink({ artifacts: store, toolType: "bash", spillThreshold: 10 });
    try {
      sink.push("0123456789abcdef");
    } finally {
      restore();
    }
    expect(sink.dump()).toEqual({ output: "6789abcdef", truncated: true, totalBytes: 16, totalLines: 1 });
    const bare = new OutputSink({ toolType: "bash", spillThreshold: 10 });
    bare.push("0123456789abcdef\n");
    expect(bare.dump()).toEqual({ output: "789abcdef\n", truncated: true, totalBytes: 17, totalLines: 1 });
  });

  it("validates options and refuses pushes after dump", () => {
    expect(() => new OutputSink({ toolType: "t", spillThreshold: -1 })).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    expect(() => new OutputSink({ toolType: "t", maxColumns: 1.5 })).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    const sink = new OutputSink({ toolType: "t" });
    sink.push("x");
    const first = sink.dump();
    expect(sink.dump()).toBe(first);
    expect(() => sink.push("y")).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
  });
});
