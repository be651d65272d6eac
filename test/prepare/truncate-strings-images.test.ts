import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../src/format/types.ts";
import { migrateFile } from "../../src/maintenance/migrate-file.ts";
import { prepareLine, resolvePrepareOptions } from "../../src/prepare/pipeline.ts";
import { TRUNCATION_SUFFIX, truncateStrings } from "../../src/prepare/truncate-strings.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sha } from "../support/sha.ts";

const MAX = 1000;
const options = resolvePrepareOptions({ maxStringChars: MAX });
const png = makePng(60, 60, 3);
const canonical = png.toString("base64");
/** The same image as MIME writes it: a CRLF every 76 characters. */
const mime = canonical.match(/.{1,76}/g)!.join("\r\n");
const notBase64 = "%".repeat(MAX * 2); // an image payload that no decoder accepts
const long = "y".repeat(MAX * 2);

function entry(content: unknown): SessionEntry {
  return { type: "message", id: "aaaaaaaa", parentId: null, timestamp: "t", message: { role: "user", content } };
}

describe("string truncation never cuts an image payload", () => {
  it("leaves every image shape whole while cutting ordinary strings beside them", () => {
    const url = `data:image/png;base64,${notBase64}`;
    const blocks = [
      { type: "image", data: notBase64, mimeType: "image/png", caption: long },
      { data: notBase64, mimeType: "image/png" },
      { type: "image_url", image_url: url },
      { type: "image_url", image_url: { url, detail: long } },
      { type: "image", source: { type: "base64", media_type: "image/png", data: notBase64 } },
    ];
    const out = truncateStrings(entry(blocks), MAX).message as { content: Array<Record<string, any>> };
    expect(out.content[0]!.data).toBe(notBase64);
    expect(out.content[0]!.caption.endsWith(TRUNCATION_SUFFIX)).toBe(true);
    expect(out.content[1]!.data).toBe(notBase64);
    expect(out.content[2]!.image_url).toBe(url);
    expect(out.content[3]!.image_url.url).toBe(url);
    expect(out.content[3]!.image_url.detail.endsWith(TRUNCATION_SUFFIX)).toBe(true);
    expect(out.content[4]!.source.data).toBe(notBase64);
    // A plain "data" string outside any image shape is an ordinary string.
    expect((truncateStrings({ data: long }, MAX) as { data: string }).data).toHaveLength(MAX);
  });

  it("externalizes base64 with MIME line breaks (longer than maxStringChars) instead of cutting it", () => {
    expect(mime.length).toBeGreaterThan(MAX);
    for (const block of [
      { type: "image", data: mime, mimeType: "image/png" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: mime } },
    ]) {
      const prepared = prepareLine(entry([block]), options);
      expect(prepared.blobs).toHaveLength(1);
      expect(prepared.blobs[0]!.bytes.equals(png)).toBe(true);
      expect(JSON.stringify(prepared.entry)).toContain(`blob:sha256:${sha(png)}`);
      expect(prepared.imagesKeptInline).toBe(0);
    }
  });

  it("keeps a payload that is not base64 inline and whole, and counts it", () => {
    const prepared = prepareLine(entry([{ type: "image", data: notBase64, mimeType: "image/png" }]), options);
    expect(prepared.blobs).toEqual([]);
    expect((prepared.entry.message as { content: Array<{ data: string }> }).content[0]!.data).toBe(notBase64);
    expect(prepared.imagesKeptInline).toBe(1);
  });

  it("migrating a file with a MIME-broken image keeps the image: it rehydrates to the canonical base64 of the same bytes", async () => {
    const dir = tempDir();
    const path = join(dir, "s.jsonl");
    const head = { type: "session", id: "mime-1", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/m" };
    const records = [
      head,
      {
        type: "message",
        timestamp: "t",
        message: {
          role: "user",
          content: [
            { type: "image", data: mime, mimeType: "image/png" },
            { type: "image", data: notBase64, mimeType: "image/png" },
          ],
        },
      },
    ];
    writeFileSync(path, `${records.map((r) => JSON.stringify(r)).join("\n")}\n`);
    const report = await migrateFile(path, { sessionsDir: join(dir, "store"), blobsDir: join(dir, "blobs"), maxStringChars: MAX });
    expect(report).toMatchObject({ status: "imported", imagesExternalized: 1, imagesKeptInline: 1 });
    expect(readFileSync(report.target, "utf8")).not.toContain(TRUNCATION_SUFFIX.trim());
    const m = await SessionManager.open(report.target, { root: dir, blobsDir: join(dir, "blobs"), readOnly: true });
    const content = (m.getEntries()[0]!.message as { content: Array<{ data: string }> }).content;
    expect(content[0]!.data).toBe(canonical);
    expect(Buffer.from(content[0]!.data, "base64").equals(png)).toBe(true);
    expect(content[1]!.data).toBe(notBase64);
  });
});
