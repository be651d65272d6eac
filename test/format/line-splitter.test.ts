import { describe, expect, it } from "vitest";
import { LinePuller, LineSplitter, type LineSplitterOptions, sameLine, type ScannedLine } from "../../src/format/line-splitter.ts";

function split(data: Buffer, chunkSize: number, options: LineSplitterOptions = {}): ScannedLine[] {
  const lines: ScannedLine[] = [];
  const splitter = new LineSplitter((l) => lines.push({ ...l, bytes: Buffer.from(l.bytes) }), options);
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

describe("LineSplitter with reuseBuffer", () => {
  const text = `{"a":"héllo 🎉"}\n{"b":"ünïcödé ✓"}\n{"long":"${"x€".repeat(3000)}"}\n{"l2":"${"y".repeat(9000)}"}\n{"tail":"日本語"}`;
  const data = Buffer.from(text, "utf8");

  it.each([1, 3, 64, 4096, 1 << 20])("cuts the same lines as without it, with %i-byte chunks", (size) => {
    expect(split(data, size, { reuseBuffer: true })).toEqual(split(data, size));
  });

  it("gathers every line longer than a chunk in one reused buffer (no allocation per line)", () => {
    const seen: Buffer[] = [];
    const splitter = new LineSplitter((l) => seen.push(l.bytes), { reuseBuffer: true });
    // Lines above Buffer's pool size would each get an ArrayBuffer of their own without it.
    const lines = Buffer.from(`${"a".repeat(5000)}\n${"b".repeat(6000)}\n`);
    for (let i = 0; i < lines.length; i += 1024) splitter.push(Buffer.from(lines.subarray(i, i + 1024)));
    expect(seen.length).toBe(2);
    expect(seen[0]!.buffer).toBe(seen[1]!.buffer);
    expect(seen[1]!.toString()).toBe("b".repeat(6000));
  });
});

describe("LineSplitter with maxLineBytes", () => {
  function splitLimited(data: Buffer, chunkSize: number, maxLineBytes: number, keepBytes: number, reuseBuffer = false) {
    const lines: ScannedLine[] = [];
    let peakPending = 0;
    const splitter = new LineSplitter((l) => lines.push({ ...l, bytes: Buffer.from(l.bytes) }), { maxLineBytes, keepBytes, reuseBuffer });
    for (let i = 0; i < data.length; i += chunkSize) {
      splitter.push(data.subarray(i, i + chunkSize));
      peakPending = Math.max(peakPending, (splitter as unknown as { pendingLength: number }).pendingLength);
    }
    splitter.end();
    return { lines, peakPending };
  }

  it.each([
    [1, false],
    [7, false],
    [64, false],
    [1000, false],
    [1 << 20, false],
    [1, true],
    [7, true],
    [1000, true],
  ])(
    "emits an over-long line as a kept prefix + its full length, keeping memory bounded (%i-byte chunks, reuseBuffer %s)",
    (size, reuse) => {
      const giant = `{"type":"message","data":"${"A".repeat(5000)}"}`;
      const data = Buffer.from(`{"a":1}\n${giant}\n{"b":2}\n${giant}`);
      const { lines, peakPending } = splitLimited(data, size, 1000, 100, reuse);
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

describe("LinePuller", () => {
  /** A source handing out `data` in reads of at most `max` bytes. */
  const source = (data: Buffer, max: number) => {
    let at = 0;
    return (into: Buffer) => {
      const n = data.copy(into, 0, at, Math.min(data.length, at + Math.min(max, into.length)));
      at += n;
      return n;
    };
  };

  it.each([1, 3, 64])("hands out the splitter's lines one at a time (%i-byte reads), then null for good", (max) => {
    const data = Buffer.from('{"h":1}\n\n{"é":"ü"}\nlast');
    const puller = new LinePuller(source(data, max), 4);
    const got: ScannedLine[] = [];
    for (let line = puller.next(); line !== null; line = puller.next()) got.push(line);
    expect(got.map((l) => [l.bytes.toString(), l.offset, l.terminated])).toEqual(
      split(data, max).map((l) => [l.bytes.toString(), l.offset, l.terminated]),
    );
    expect(got.map((l) => l.bytes.toString())).toEqual(['{"h":1}', "", '{"é":"ü"}', "last"]);
    expect(puller.next()).toBeNull();
  });

  it("sameLine tells a final line without its newline from the same bytes with one", () => {
    const [a] = split(Buffer.from("x\n"), 8);
    const [b] = split(Buffer.from("x"), 8);
    expect(sameLine(a!, a!)).toBe(true);
    expect(sameLine(a!, b!)).toBe(false);
  });
});
