import { describe, expect, it } from "vitest";
import { LineSplitter, type ScannedLine } from "../../src/format/line-splitter.ts";

function split(data: Buffer, chunkSize: number): ScannedLine[] {
  const lines: ScannedLine[] = [];
  const splitter = new LineSplitter((l) => lines.push({ ...l, bytes: Buffer.from(l.bytes) }));
  for (let i = 0; i < data.length; i += chunkSize) splitter.push(data.subarray(i, i + chunkSize));
  splitter.end();
  return lines;
}

describe("LineSplitter", () => {
  const text = `{"a":"héllo 🎉"}\n{"b":"ünïcödé ✓"}\n{"long":"${"x€".repeat(3000)}"}\n{"tail":"日本語"}`;
  const data = Buffer.from(text, "utf8");
  const expected = text.split("\n");

  it.each([1, 2, 3, 5, 7, 64, 4096, 1 << 20])(
    "cuts identical lines with %i-byte chunks (multi-byte chars and lines longer than a chunk)",
    (size) => {
      const lines = split(data, size);
      expect(lines.map((l) => l.bytes.toString("utf8"))).toEqual(expected);
      expect(lines.map((l) => l.lineNumber)).toEqual([1, 2, 3, 4]);
      expect(lines.map((l) => l.terminated)).toEqual([true, true, true, false]);
      let offset = 0;
      for (const line of lines) {
        expect(line.offset).toBe(offset);
        offset += line.bytes.length + 1;
      }
    },
  );

  it("reports no final line when the data ends with a newline", () => {
    const lines = split(Buffer.from("a\nb\n"), 3);
    expect(lines.map((l) => [l.bytes.toString(), l.terminated])).toEqual([
      ["a", true],
      ["b", true],
    ]);
  });

  it("does not keep references to a reused read buffer for pending bytes", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((l) => lines.push(l.bytes.toString()));
    const buf = Buffer.from("abc");
    splitter.push(buf);
    buf.fill(0x7a); // the caller reuses its buffer for the next read
    splitter.push(Buffer.from("def\n"));
    expect(lines).toEqual(["abcdef"]);
  });
});

describe("LineSplitter with maxLineBytes", () => {
  function splitLimited(data: Buffer, chunkSize: number, maxLineBytes: number, keepBytes: number) {
    const lines: ScannedLine[] = [];
    let peakPending = 0;
    const splitter = new LineSplitter((l) => lines.push({ ...l, bytes: Buffer.from(l.bytes) }), { maxLineBytes, keepBytes });
    for (let i = 0; i < data.length; i += chunkSize) {
      splitter.push(data.subarray(i, i + chunkSize));
      peakPending = Math.max(peakPending, (splitter as unknown as { pendingLength: number }).pendingLength);
    }
    splitter.end();
    return { lines, peakPending };
  }

  it.each([1, 7, 64, 1000, 1 << 20])(
    "emits an over-long line as a kept prefix + its full length, keeping memory bounded (%i-byte chunks)",
    (size) => {
      const giant = `{"type":"message","data":"${"A".repeat(5000)}"}`;
      const data = Buffer.from(`{"a":1}\n${giant}\n{"b":2}\n${giant}`);
      const { lines, peakPending } = splitLimited(data, size, 1000, 100);
      expect(lines.map((l) => l.bytes.toString())).toEqual(['{"a":1}', giant.slice(0, 100), '{"b":2}', giant.slice(0, 100)]);
      expect(lines.map((l) => l.fullLength)).toEqual([undefined, giant.length, undefined, giant.length]);
      expect(lines.map((l) => l.offset)).toEqual([0, 8, 9 + giant.length, 17 + giant.length]);
      expect(lines.map((l) => l.terminated)).toEqual([true, true, true, false]);
      // never more than the limit gathered, and only the prefix once the line is known to be over it
      expect(peakPending).toBeLessThanOrEqual(1000);
    },
  );

  it("a line of exactly maxLineBytes is still whole", () => {
    const { lines } = splitLimited(Buffer.from(`${"x".repeat(50)}\n`), 7, 50, 10);
    expect(lines[0]!.bytes.toString()).toBe("x".repeat(50));
    expect(lines[0]!.fullLength).toBeUndefined();
  });
});
