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
  const text = '{"a":"héllo 🎉"}\n{"b":"ünïcödé ✓"}\n' + `{"long":"${"x€".repeat(3000)}"}\n` + '{"tail":"日本語"}';
  const data = Buffer.from(text, "utf8");
  const expected = text.split("\n");

  it.each([1, 2, 3, 5, 7, 64, 4096, 1 << 20])("cuts identical lines with %i-byte chunks (multi-byte chars and lines longer than a chunk)", (size) => {
    const lines = split(data, size);
    expect(lines.map((l) => l.bytes.toString("utf8"))).toEqual(expected);
    expect(lines.map((l) => l.lineNumber)).toEqual([1, 2, 3, 4]);
    expect(lines.map((l) => l.terminated)).toEqual([true, true, true, false]);
    let offset = 0;
    for (const line of lines) {
      expect(line.offset).toBe(offset);
      offset += line.bytes.length + 1;
    }
  });

  it("reports no final line when the data ends with a newline", () => {
    const lines = split(Buffer.from("a\nb\n"), 3);
    expect(lines.map((l) => [l.bytes.toString(), l.terminated])).toEqual([["a", true], ["b", true]]);
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
