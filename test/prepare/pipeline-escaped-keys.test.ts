import { writeFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../src/format/types.ts";
import { migrateFile } from "../../src/maintenance/migrate-file.ts";
import { prepareLine, resolvePrepareOptions } from "../../src/prepare/pipeline.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";

const options = resolvePrepareOptions();
const b64 = makePng(40, 40, 2).toString("base64");

/** Prepares a line as a migration does: the entry parsed from `text`, the text passed along. */
const fromText = (text: string) => prepareLine(JSON.parse(text) as SessionEntry, options, text);

describe("prepareLine on text that spells keys with JSON escapes", () => {
  it("strips a transient key written with escapes", () => {
    const text =
      '{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall' +
      '","partial\\u004ason":"{\\"a"}]}}';
    const { line } = fromText(text);
    expect(line).not.toContain("partial");
    expect(JSON.parse(line).message.content[0]).toEqual({ type: "toolCall" });
  });

  it("externalizes an image block whose type is written with escapes", () => {
    const text =
      `{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"i` +
      `m\\u0061ge","data":"${b64}"}]}}`;
    const prepared = fromText(text);
    expect(prepared.blobs).toHaveLength(1);
    expect(prepared.line).not.toContain(b64.slice(0, 40));
  });

  it("externalizes a short data URL whose slashes are escaped", () => {
    const url = `data:image\\/png;base64,${b64.slice(0, 40)}`;
    const text =
      `{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"im` +
      `age_url","image_url":"${url}"}]}}`;
    const prepared = fromText(text);
    expect(prepared.blobs).toHaveLength(1);
    expect(prepared.line).toContain("blob:sha256:");
  });

  it("migrating a legacy file drops an escaped transient key", async () => {
    const dir = tempDir();
    const path = join(dir, "s.jsonl");
    writeFileSync(
      path,
      '{"type":"session","id":"esc","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/e"}\n{"type":"message","timestamp":"t","message"' +
        ':{"role":"assistant","content":[],"jsonl\\u0045vents":[1,2]}}\n',
    );
    const report = await migrateFile(path, { sessionsDir: join(dir, "store"), blobsDir: join(dir, "blobs") });
    expect(report.status).toBe("imported");
    expect(readFileSync(report.target, "utf8")).not.toMatch(/jsonl(E|\\u0045)vents/);
  });
});
