import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../src/format/types.ts";
import { decodeCanonicalBase64, externalizeImages } from "../../src/prepare/externalize-images.ts";
import { prepareEntryForPersistence, prepareLine, resolvePrepareOptions } from "../../src/prepare/pipeline.ts";
import { stripTransientFields } from "../../src/prepare/strip-transient-fields.ts";
import { TRUNCATION_SUFFIX, truncateString, truncateStrings } from "../../src/prepare/truncate-strings.ts";
import { makePng } from "../support/png.ts";
import { sha } from "../support/sha.ts";

const options = resolvePrepareOptions();
const png = makePng(24, 24, 7);
const b64 = png.toString("base64");

function entry(fields: Record<string, unknown>): SessionEntry {
  return { type: "message", id: "aaaaaaaa", parentId: null, timestamp: "t", ...fields };
}

describe("stripTransientFields", () => {
  it("removes partialJson and jsonlEvents at any depth, sharing untouched branches", () => {
    const untouched = { role: "user", content: [{ type: "text", text: "x" }] };
    const input = entry({
      message: { role: "assistant", content: [{ type: "toolCall", partialJson: "{", arguments: {} }], jsonlEvents: [1] },
      other: untouched,
    });
    const frozen = structuredClone(input);
    const out = stripTransientFields(input, options.transientKeys);
    expect(out).toEqual(entry({ message: { role: "assistant", content: [{ type: "toolCall", arguments: {} }] }, other: untouched }));
    expect(out.other).toBe(untouched);
    expect(input).toEqual(frozen);
  });

  it("honours a configured key list", () => {
    const custom = resolvePrepareOptions({ transientKeys: ["secretState"] });
    const out = prepareLine(entry({ a: { secretState: 1, partialJson: "kept" } }), custom).entry;
    expect(out.a).toEqual({ partialJson: "kept" });
  });
});

describe("externalizeImages", () => {
  it("stores the decoded bytes of a pi image block; the blob name is their sha256", () => {
    const { value, blobs } = externalizeImages(
      entry({ message: { role: "user", content: [{ type: "image", data: b64, mimeType: "image/png" }] } }),
      1024,
    );
    expect(blobs).toHaveLength(1);
    expect(blobs[0]!.bytes.equals(png)).toBe(true);
    expect(blobs[0]!.hash).toBe(sha(png));
    expect((value.message as { content: Array<{ data: string }> }).content[0]!.data).toBe(`blob:sha256:${sha(png)}`);
  });

  it("handles images arrays of {data, mimeType}", () => {
    const { value, blobs } = externalizeImages(entry({ images: [{ data: b64, mimeType: "image/png" }] }), 1024);
    expect(blobs).toHaveLength(1);
    expect((value.images as Array<{ data: string }>)[0]!.data).toBe(`blob:sha256:${sha(png)}`);
  });

  it("stores the UTF-8 bytes of provider data URLs, string and OpenAI {url} shapes", () => {
    const url = `data:image/png;base64,${b64}`;
    const { value, blobs } = externalizeImages(
      entry({ a: { image_url: url }, b: { type: "image_url", image_url: { url, detail: "high" } } }),
      1024,
    );
    expect(blobs.map((b) => b.hash)).toEqual([sha(url), sha(url)]);
    expect(blobs[0]!.bytes.toString("utf8")).toBe(url);
    expect(value.a).toEqual({ image_url: `blob:sha256:${sha(url)}` });
    expect(value.b).toEqual({ type: "image_url", image_url: { url: `blob:sha256:${sha(url)}`, detail: "high" } });
  });

  it("stores the decoded bytes of Anthropic source blocks", () => {
    const { value, blobs } = externalizeImages(
      entry({ content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: b64 } }] }),
      1024,
    );
    expect(blobs[0]!.bytes.equals(png)).toBe(true);
    expect((value.content as Array<{ source: unknown }>)[0]!.source).toEqual({
      type: "base64",
      media_type: "image/png",
      data: `blob:sha256:${sha(png)}`,
    });
  });

  it("applies the 1024-char threshold at its boundary", () => {
    const bytes1023 = Buffer.alloc(767, 1); // 767 bytes → 1024 base64 chars
    const at = bytes1023.toString("base64");
    expect(at.length).toBe(1024);
    const below = Buffer.alloc(765, 1).toString("base64"); // 1020 chars
    expect(externalizeImages(entry({ content: [{ type: "image", data: at, mimeType: "image/png" }] }), 1024).blobs).toHaveLength(1);
    expect(externalizeImages(entry({ content: [{ type: "image", data: below, mimeType: "image/png" }] }), 1024).blobs).toHaveLength(0);
  });

  it("leaves data that is already a ref untouched, by identity", () => {
    const input = entry({
      content: [{ type: "image", data: `blob:sha256:${sha(png)}`, mimeType: "image/png" }],
      x: { image_url: `blob:sha256:${sha("u")}` },
    });
    const { value, blobs } = externalizeImages(input, 1024);
    expect(value).toBe(input);
    expect(blobs).toEqual([]);
  });

  it("externalizes only canonical base64 so rehydration restores the exact string", () => {
    expect(decodeCanonicalBase64(b64)?.equals(png)).toBe(true);
    expect(decodeCanonicalBase64(`${b64.slice(0, 100)}\n${b64.slice(100)}`)).toBeNull();
    expect(decodeCanonicalBase64(b64.replace(/\+/g, "-"))).toBe(b64.includes("+") ? null : decodeCanonicalBase64(b64));
    expect(decodeCanonicalBase64("QR==")).toBeNull(); // non-zero pad bits
    expect(decodeCanonicalBase64("QQ==")?.toString()).toBe("A");
  });
});

describe("truncateStrings", () => {
  it("cuts strings over 500,000 units to exactly the limit including the suffix", () => {
    const long = "a".repeat(500_001);
    const cut = truncateString(long, 500_000);
    expect(cut.length).toBe(500_000);
    expect(cut.endsWith(TRUNCATION_SUFFIX)).toBe(true);
    expect(truncateString("a".repeat(500_000), 500_000)).toBe("a".repeat(500_000));
  });

  it("never splits a surrogate pair", () => {
    const keep = 500_000 - TRUNCATION_SUFFIX.length;
    const long = "a".repeat(keep - 1) + "😀".repeat(100);
    const cut = truncateString(long, 500_000);
    expect(cut).toBe("a".repeat(keep - 1) + TRUNCATION_SUFFIX);
    expect(cut.length).toBe(500_000 - 1);
  });

  it("clears signature keys instead of cutting them and recomputes lineCount", () => {
    const content = "line\n".repeat(200_000);
    const input = entry({
      message: {
        content: [{ type: "thinking", thinking: "t", thinkingSignature: "s".repeat(600_000) }],
        output: { content, lineCount: 200_001 },
        encrypted_content: "e".repeat(500_001),
        signature: "short",
      },
    });
    const out = truncateStrings(input, 500_000);
    const msg = out.message as Record<string, any>;
    expect(msg.content[0].thinkingSignature).toBe("");
    expect(msg.encrypted_content).toBe("");
    expect(msg.signature).toBe("short");
    expect(msg.output.content.length).toBe(500_000);
    expect(msg.output.lineCount).toBe(msg.output.content.split("\n").length);
    expect(msg.output.lineCount).toBeLessThan(200_001);
  });
});

describe("pipeline", () => {
  it("returns unchanged entries by identity, with no blob writes", () => {
    const input = entry({ message: { role: "user", content: "plain" } });
    const line = prepareLine(input, options);
    expect(line.entry).toBe(input);
    expect(line.line).toBe(JSON.stringify(input));
  });

  it("keeps prepareEntryForPersistence (deprecated) as prepareLine without the line", () => {
    const plain = entry({ message: { role: "user", content: "plain" } });
    expect(prepareEntryForPersistence(plain, options).entry).toBe(plain);
    const image = entry({ message: { role: "user", content: [{ type: "image", data: b64, mimeType: "image/png" }], partialJson: "x" } });
    const { entry: prepared, blobs, imagesKeptInline } = prepareLine(image, options);
    expect(prepareEntryForPersistence(image, options)).toEqual({ entry: prepared, blobs, imagesKeptInline });
    expect(blobs).toHaveLength(1);
    // held to MAX_ENTRY_DEPTH as every append is
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 1_001; i++) deep = { deep };
    expect(() => prepareEntryForPersistence(entry({ deep }), options)).toThrow(expect.objectContaining({ code: "PERSISTENCE_FAILED" }));
  });

  it("never mutates its input and keeps inline data in the caller's entry", () => {
    const input = entry({
      message: { role: "user", content: [{ type: "image", data: b64, mimeType: "image/png" }], partialJson: "x", big: "z".repeat(600_000) },
    });
    const snapshot = structuredClone(input);
    const out = prepareLine(input, options);
    expect(input).toEqual(snapshot);
    const parsed = JSON.parse(out.line);
    expect(parsed.message.partialJson).toBeUndefined();
    expect(parsed.message.content[0].data).toBe(`blob:sha256:${sha(png)}`);
    expect(parsed.message.big.length).toBe(500_000);
    expect(out.blobs).toHaveLength(1);
  });

  it("runs user stages after the built-in ones", () => {
    const redact = (e: SessionEntry) =>
      JSON.stringify(e).includes("sk-secret") ? (JSON.parse(JSON.stringify(e).replaceAll("sk-secret", "[redacted]")) as SessionEntry) : e;
    const custom = resolvePrepareOptions({ stages: [redact] });
    const out = prepareLine(entry({ message: { role: "user", content: "key sk-secret" } }), custom);
    expect(out.line).toContain("[redacted]");
    expect(out.line).not.toContain("sk-secret");
  });

  it("rejects bad options with INVALID_OPTION", () => {
    expect(() => resolvePrepareOptions({ blobThreshold: -1 })).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    expect(() => resolvePrepareOptions({ maxStringChars: 1.5 })).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    expect(() => resolvePrepareOptions({ transientKeys: [1 as unknown as string] })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION" }),
    );
  });
});
