import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../src/format/types.ts";
import { migrateFile } from "../../src/maintenance/migrate-file.ts";
import { prepareLine, resolvePrepareOptions } from "../../src/prepare/pipeline.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";

const b64 = makePng(40, 40, 4).toString("base64");
const long = "z".repeat(300);
/** `__proto__` keys as JSON.parse keeps them: own data properties, at the top and nested, each needing a stage. */
const text =
  `{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","__proto__":{"partialJson":"x","keep":1},` +
  `"message":{"role":"user","__proto__":{"long":"${long}"},"content":[{"type":"image","data":"${b64}","__proto__":{"k":2}}]}}`;

function checkKept(line: string): void {
  const out = JSON.parse(line);
  expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  expect(Object.hasOwn(out, "__proto__")).toBe(true);
  expect(out.__proto__).toEqual({ keep: 1 });
  expect(Object.hasOwn(out.message, "__proto__")).toBe(true);
  expect(out.message.__proto__.long.length).toBeLessThanOrEqual(200);
  expect(out.message.content[0].__proto__).toEqual({ k: 2 });
  expect(out.message.content[0].data).toMatch(/^blob:sha256:/);
}

describe("own __proto__ keys survive every stage as data, never as prototypes", () => {
  it("prepareLine keeps them (with and without the source text)", () => {
    const options = resolvePrepareOptions({ maxStringChars: 200 });
    const entry = JSON.parse(text) as SessionEntry;
    checkKept(prepareLine(entry, options, text).line);
    checkKept(prepareLine(entry, options).line);
    expect(Object.getPrototypeOf(entry)).toBe(Object.prototype);
  });

  it("a v1 migration keeps them", async () => {
    const dir = tempDir();
    const path = join(dir, "s.jsonl");
    const v1Line = text.replace('"id":"aaaaaaaa","parentId":null,', "");
    writeFileSync(
      path,
      `{"type":"session","id":"proto","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","__proto__":{"h":1}}\n${v1Line}\n`,
    );
    const report = await migrateFile(path, { sessionsDir: join(dir, "store"), blobsDir: join(dir, "blobs"), maxStringChars: 200 });
    expect(report.status).toBe("imported");
    const [header, line] = readFileSync(report.target, "utf8").trimEnd().split("\n");
    expect(JSON.parse(header!).__proto__).toEqual({ h: 1 });
    checkKept(line!);
  });
});
