import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decodeForeignLine, readForeignLines, type ForeignLine } from "../../src/interchange/foreign-lines.ts";
import { tempDir } from "../support/temp-dir.ts";

async function all(lines: AsyncIterable<ForeignLine>): Promise<ForeignLine[]> {
  const out: ForeignLine[] = [];
  for await (const l of lines) out.push(l);
  return out;
}

describe("readForeignLines", () => {
  it("reads only the first `size` bytes when given: what was appended since is not read", async () => {
    const path = join(tempDir("ts-foreign-lines-"), "t.jsonl");
    writeFileSync(path, '{"a":1}\n{"b":2}\n{"c":3}\n');
    expect((await all(readForeignLines(path))).map((l) => l.kind === "record" && l.value)).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
    const cut = await all(readForeignLines(path, 12));
    expect(cut).toEqual([
      { kind: "record", line: 1, value: { a: 1 } },
      { kind: "damaged", line: 2, code: "TORN_LINE", reason: expect.stringContaining("invalid JSON"), text: '{"b"', terminated: false },
    ]);
    expect(await all(readForeignLines(path, 0))).toEqual([]);
  });

  it("classifies a line: record, bad JSON, torn, invalid UTF-8 (kept as base64), empty", () => {
    const at = (bytes: Buffer, terminated = true) => decodeForeignLine({ bytes, lineNumber: 1, terminated });
    expect(at(Buffer.from("[1,2]"))).toEqual({ kind: "record", line: 1, value: [1, 2] });
    expect(at(Buffer.from("{x"))).toMatchObject({ kind: "damaged", code: "BAD_JSON", text: "{x" });
    expect(at(Buffer.from("{x"), false)).toMatchObject({ kind: "damaged", code: "TORN_LINE", text: "{x", terminated: false });
    expect(at(Buffer.from([0x7b, 0xff]))).toMatchObject({ kind: "damaged", code: "INVALID_UTF8", base64: "e/8=" });
    expect(at(Buffer.from("  "))).toMatchObject({ kind: "damaged", code: "EMPTY_LINE", text: "  " });
  });
});
