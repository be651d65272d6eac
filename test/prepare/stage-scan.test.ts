import { describe, expect, it } from "vitest";
import { externalizeImages } from "../../src/prepare/externalize-images.ts";
import { prepareLine, resolvePrepareOptions } from "../../src/prepare/pipeline.ts";
import { scanStages } from "../../src/prepare/stage-scan.ts";
import { stripTransientFields } from "../../src/prepare/strip-transient-fields.ts";
import { truncateStrings } from "../../src/prepare/truncate-strings.ts";

const KEYS = new Set(["partialJson", "jsonlEvents"]);
const MAX = 100;
const png = Buffer.alloc(900, 7).toString("base64");
const small = Buffer.alloc(30, 7).toString("base64");
const ref = `blob:sha256:${"ab".repeat(32)}`;

const entries: Record<string, unknown>[] = [
  { type: "message", id: "a", message: { role: "user", content: [{ type: "text", text: "hello" }] } },
  { type: "message", id: "b", message: { role: "assistant", content: [{ type: "toolCall", partialJson: "{" }] } },
  { type: "message", id: "c", message: { role: "user", content: [{ type: "image", data: png, mimeType: "image/png" }] } },
  { type: "message", id: "d", message: { role: "user", content: [{ type: "image", source: { type: "base64", data: png } }] } },
  { type: "message", id: "e", message: { content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${png}` } }] } },
  { type: "message", id: "f", message: { content: [{ type: "text", text: "x".repeat(MAX + 1) }] } },
  { type: "custom", id: "g", data: { data: png, note: "a data key that is no image" }, list: ["y".repeat(MAX + 1)] },
  { type: "message", id: "i", message: { content: [{ type: "image", data: small, mimeType: "image/png" }] } },
  { type: "message", id: "j", message: { content: [{ type: "image", data: ref, mimeType: "image/png" }] } },
  { type: "message", id: "k", message: { content: [{ type: "image", data: "not base64!".repeat(200), mimeType: "image/png" }] } },
  { type: "custom", id: "h", data: 'text mentioning image and data:image/png and "partialJson":' },
];

describe("scanStages", () => {
  it("reports a stage exactly when that stage changes the entry", () => {
    for (const entry of entries) {
      const scan = scanStages(entry, KEYS, MAX, 1024);
      const label = String(entry.id);
      expect(scan.strip, label).toBe(stripTransientFields(entry, KEYS) !== entry);
      if (!scan.strip) {
        const { value, keptInline } = externalizeImages(entry, 1024);
        // The stage must run when it changes the entry or has a payload to warn about.
        expect(scan.images, label).toBe(value !== entry || keptInline > 0);
        expect(scan.cut, label).toBe(truncateStrings(entry, MAX) !== entry);
      }
    }
  });

  it("reports every stage once a transient key is seen (removing keys can change what later stages see)", () => {
    expect(scanStages(entries[1], KEYS, MAX, 1024)).toEqual({ strip: true, images: true, cut: true, refs: true });
  });
});

describe("prepareLine's mayHoldRefs", () => {
  it("is false for a text entry (the writer skips searching it) and true when the line names a blob", () => {
    const options = resolvePrepareOptions({});
    const base = { type: "message", id: "a", parentId: null, timestamp: "t" };
    const text = prepareLine({ ...base, message: { role: "user", content: "blob:sha256: is just text here" } }, options);
    expect(text.mayHoldRefs).toBe(false);
    const ref = `blob:sha256:${"a".repeat(64)}`;
    const carried = prepareLine(
      { ...base, message: { role: "user", content: [{ type: "image", data: ref, mimeType: "image/png" }] } },
      options,
    );
    expect(carried.mayHoldRefs).toBe(true);
    expect(carried.line).toContain(ref);
    const image = Buffer.alloc(3000, 7).toString("base64");
    const fresh = prepareLine(
      { ...base, message: { role: "user", content: [{ type: "image", data: image, mimeType: "image/png" }] } },
      options,
    );
    expect(fresh.mayHoldRefs).toBe(true);
    expect(fresh.blobs).toHaveLength(1);
  });
});
