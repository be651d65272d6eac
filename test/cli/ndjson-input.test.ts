import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { readNdjson } from "../../src/cli/ndjson-input.ts";

function chunked(data: Buffer, size: number): Readable {
  const chunks: Buffer[] = [];
  for (let i = 0; i < data.length; i += size) chunks.push(data.subarray(i, i + size));
  return Readable.from(chunks);
}

describe("readNdjson", () => {
  const values = [{ a: "héllo 🎉" }, { long: "x€".repeat(5000) }, [1, 2], "s", 3, null, { tail: "日本語" }];
  const text = `${values.map((v) => JSON.stringify(v)).join("\r\n")}\n\n   \n`;

  it.each([1, 2, 3, 7, 64, 4096, 1 << 20])(
    "parses the same values whatever the chunk size (%i bytes), skipping blank lines, tolerating CRLF",
    async (size) => {
      expect(await readNdjson(chunked(Buffer.from(text), size))).toEqual(values);
    },
  );

  it("takes string chunks and a final line without a newline", async () => {
    expect(await readNdjson(Readable.from(['{"a":1}\n{"b"', ":2}"]))).toEqual([{ a: 1 }, { b: 2 }]);
    expect(await readNdjson(Readable.from([]))).toEqual([]);
  });

  it("names the line that is not JSON (INVALID_OPTION)", async () => {
    await expect(readNdjson(chunked(Buffer.from('{"a":1}\n\n{"b":\n{"c":3}\n'), 3))).rejects.toMatchObject({
      code: "INVALID_OPTION",
      message: expect.stringMatching(/line 3 \(after record 1\)/),
    });
  });
});
