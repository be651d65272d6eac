import { describe, expect, it } from "vitest";
import { blobRefsIn, forEachBlobRef } from "../../src/blob/blob-ref.ts";

const a = "a".repeat(64);
const b = "0123456789abcdef".repeat(4);

describe("the blob-ref extractor", () => {
  const bad = `blob:sha256:${"A".repeat(64)} blob:sha256:abc blob:sha256:${b}f`;
  const text = `{"x":"blob:sha256:${a}","y":["blob:sha256:${b}","blob:sha256:${a}"],"bad":"${bad}"}`;

  it("visits every well-formed ref in order, repeats included, in a string and in raw bytes alike", () => {
    for (const input of [text, Buffer.from(text)]) {
      const seen: string[] = [];
      forEachBlobRef(input, (hash) => seen.push(hash));
      // uppercase and short hex are no refs; 65 hex digits name the blob of the first 64
      expect(seen).toEqual([a, b, a, b]);
    }
  });

  it("lists the distinct hashes in order of first appearance", () => {
    expect(blobRefsIn(text)).toEqual([a, b]);
    expect(blobRefsIn(Buffer.from(text))).toEqual([a, b]);
    expect(blobRefsIn("no refs, blob:sha256: alone")).toEqual([]);
  });
});
