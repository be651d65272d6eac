import { describe, expect, it } from "vitest";
import { cutCounters, cutImagePayloads, restoreCuts } from "../../src/prepare/cut-payloads.ts";
import { externalizeImages } from "../../src/prepare/externalize-images.ts";
import { makePng } from "../support/png.ts";
import { sha } from "../support/sha.ts";

const THRESHOLD = 1024;
/** A PNG of ~60 KB, so its base64 (~80 KB) makes a line long enough to be cut. */
const png = makePng(140, 140, 7);
const b64 = png.toString("base64");
const dataUrl = `data:image/png;base64,${b64}`;

function entry(content: unknown): Record<string, unknown> {
  return { type: "message", id: "e1", parentId: null, timestamp: "t", message: { role: "user", content } };
}

/** What a load made of `line` before cutting existed: the parsed line, externalized. */
function wholeLineResult(line: string): { value: unknown; hashes: string[] } {
  const { value, blobs } = externalizeImages(JSON.parse(line), THRESHOLD);
  return { value, hashes: blobs.map((b) => b.hash) };
}

/** The cut path: cut, parse the cut bytes, restore, then externalize what is left (as the loader does). */
function cutLineResult(line: string): { value: unknown; hashes: string[] } | null {
  const cuts = cutImagePayloads(Buffer.from(line), THRESHOLD);
  if (cuts === null) return null;
  const restored = restoreCuts(JSON.parse(cuts.bytes.toString("utf8")), cuts);
  if (restored === null) return null;
  const rest = externalizeImages(restored.value, THRESHOLD);
  return { value: rest.value, hashes: [...restored.hashes, ...rest.blobs.map((b) => b.hash)] };
}

describe("cutting image payloads out of a line before it is parsed", () => {
  const shapes: [string, unknown, string][] = [
    [
      "an image block's base64 data",
      [
        { type: "text", text: "see" },
        { type: "image", data: b64, mimeType: "image/png" },
      ],
      sha(png),
    ],
    ["a {data, mimeType} block", [{ data: b64, mimeType: "image/png" }], sha(png)],
    ["Anthropic source.data", [{ type: "image", source: { type: "base64", media_type: "image/png", data: b64 } }], sha(png)],
    ["an image_url data URL string", [{ type: "image_url", image_url: dataUrl }], sha(dataUrl)],
    ["an image_url.url data URL", [{ type: "image_url", image_url: { url: dataUrl, detail: "high" } }], sha(dataUrl)],
  ];
  for (const [name, content, hash] of shapes) {
    it(`${name}: the ref equals the one the whole line gives, and the payload was cut`, () => {
      const line = JSON.stringify(entry(content));
      const before = cutCounters.payloadsCut;
      const cut = cutLineResult(line);
      expect(cutCounters.payloadsCut - before).toBe(1);
      expect(cut).toEqual(wholeLineResult(line));
      expect(cut!.hashes).toEqual([hash]);
      expect(JSON.stringify(cut!.value)).toContain(`"blob:sha256:${hash}"`);
    });
  }

  it("JSON written with spaces after colons (Python's json.dumps) is cut too", () => {
    const line = JSON.stringify(entry([{ type: "image", data: b64, mimeType: "image/png" }])).replaceAll('":', '": ');
    expect(cutImagePayloads(Buffer.from(line), THRESHOLD)?.cuts.length).toBe(1);
    expect(cutLineResult(line)).toEqual(wholeLineResult(line));
  });

  it("several images on one line are each cut, in order, with their own refs", () => {
    const other = makePng(150, 120, 9).toString("base64");
    const content = [
      { type: "image", data: b64, mimeType: "image/png" },
      { type: "image", data: other, mimeType: "image/png" },
    ];
    const line = JSON.stringify(entry(content));
    expect(cutImagePayloads(Buffer.from(line), THRESHOLD)?.cuts.length).toBe(2);
    expect(cutLineResult(line)).toEqual(wholeLineResult(line));
  });

  it("a large base64 `data` that is no image slot (a document) comes back as the very same string", () => {
    const line = JSON.stringify(entry([{ type: "document", source: { type: "base64", media_type: "application/pdf", data: b64 } }]));
    const cut = cutLineResult(line);
    expect(cut).toEqual({ value: JSON.parse(line), hashes: [] });
  });

  it("odd payloads are never cut: escaped slashes, MIME line breaks as escapes, a data URL in a base64 slot", () => {
    const escaped = JSON.stringify(entry([{ type: "image", data: b64, mimeType: "image/png" }])).replaceAll("/", "\\/");
    const mime = JSON.stringify(entry([{ type: "image", data: b64.replace(/(.{76})/g, "$1\n"), mimeType: "image/png" }]));
    const urlInData = JSON.stringify(entry([{ type: "image", data: dataUrl, mimeType: "image/png" }]));
    for (const line of [escaped, mime, urlInData]) expect(cutImagePayloads(Buffer.from(line), THRESHOLD)).toBeNull();
  });

  it("a payload with a raw tab (invalid JSON) is not cut, so the line still fails to parse as a whole", () => {
    const line = JSON.stringify(entry([{ type: "image", data: b64, mimeType: "image/png" }])).replace(
      b64,
      `${b64.slice(0, 400)}\t${b64.slice(400)}`,
    );
    expect(() => JSON.parse(line)).toThrow();
    expect(cutImagePayloads(Buffer.from(line), THRESHOLD)).toBeNull();
  });

  it("non-base64 bytes in a payload (not canonical) are not cut", () => {
    const line = JSON.stringify(entry([{ type: "image", data: `${b64.slice(0, -4)}é==`, mimeType: "image/png" }]));
    expect(cutImagePayloads(Buffer.from(line), THRESHOLD)).toBeNull();
  });

  it("a duplicate `data` key (the last one wins in JSON.parse) makes restoring refuse: the line is parsed whole", () => {
    const line = JSON.stringify(entry([{ type: "image", data: b64, mimeType: "image/png" }])).replace('"data":', `"data":"${b64}","data":`);
    const cuts = cutImagePayloads(Buffer.from(line), THRESHOLD)!;
    expect(cuts.cuts.length).toBe(2);
    const refusedBefore = cutCounters.restoresRefused;
    expect(restoreCuts(JSON.parse(cuts.bytes.toString("utf8")), cuts)).toBeNull();
    expect(cutCounters.restoresRefused - refusedBefore).toBe(1);
  });

  it("a line that already holds a placeholder-looking string (any NUL escape) is not cut", () => {
    const line = JSON.stringify(
      entry([
        { type: "text", text: "\u0000ts-cut:0" },
        { type: "image", data: b64, mimeType: "image/png" },
      ]),
    );
    expect(cutImagePayloads(Buffer.from(line), THRESHOLD)).toBeNull();
  });

  it("a string already equal to a placeholder never takes the place of a payload cut from a string opened by an escaped quote", () => {
    // The second cut starts at the escaped quote of `\"data:image/…`: its placeholder does not stand
    // alone once parsed, while the user's own string reads exactly as that placeholder.
    const line = JSON.stringify(
      entry([
        { type: "text", text: "\u0000ts-cut:1" },
        { type: "image_url", image_url: dataUrl },
        { type: "text", text: `"${dataUrl}` },
      ]),
    );
    expect(cutLineResult(line) ?? wholeLineResult(line)).toEqual(wholeLineResult(line));
  });

  it("a data URL whose head holds an escape is not cut (its bytes are not its value)", () => {
    const escaped = `data:image/p\\u006eg;base64,${b64}`;
    const line = JSON.stringify(entry([{ type: "image_url", image_url: "X" }])).replace('"X"', `"${escaped}"`);
    expect(JSON.parse(line).message.content[0].image_url).toBe(dataUrl);
    expect(cutLineResult(line) ?? wholeLineResult(line)).toEqual(wholeLineResult(line));
  });

  it("short lines and lines without a large payload are left alone", () => {
    const small = makePng(20, 20, 3).toString("base64");
    expect(
      cutImagePayloads(Buffer.from(JSON.stringify(entry([{ type: "image", data: small, mimeType: "image/png" }]))), THRESHOLD),
    ).toBeNull();
    const text = JSON.stringify(entry([{ type: "text", text: "x".repeat(100_000) }]));
    expect(cutImagePayloads(Buffer.from(text), THRESHOLD)).toBeNull();
  });
});
