import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { migrateFile } from "../../src/maintenance/migrate-file.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sha } from "../support/sha.ts";

const header = { type: "session", id: "mig-v1", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/m" };
const msg = (t: string) => ({ type: "message", timestamp: "t", message: { role: "user", content: t } });

/** migrateFile (streaming) must give exactly the entries the in-memory migration gives. */
async function expectSameAsLoad(records: object[]): Promise<void> {
  const dir = tempDir();
  const path = join(dir, "s.jsonl");
  writeFileSync(path, `${records.map((r) => JSON.stringify(r)).join("\n")}\n`);
  const expected = (await SessionManager.open(path, { root: dir, readOnly: true })).getEntries();
  const report = await migrateFile(path, { sessionsDir: join(dir, "store"), blobsDir: join(dir, "blobs") });
  expect(report.status).toBe("imported");
  expect(report.entries).toBe(expected.length);
  const migrated = await SessionManager.open(report.target, { root: dir, readOnly: true });
  expect(migrated.loadReport.migratedFrom).toBeNull();
  expect(migrated.getEntries()).toEqual(expected);
}

describe("migrateFile agrees with the in-memory migration", () => {
  it("v1 with a backward compaction (one pass)", async () => {
    await expectSameAsLoad([
      header,
      msg("a"),
      msg("b"),
      msg("c"),
      { type: "compaction", timestamp: "t", summary: "s", firstKeptEntryIndex: 2, tokensBefore: 1 },
      msg("d"),
    ]);
  });

  it("v1 whose compaction keeps an entry after itself (falls back to two passes)", async () => {
    await expectSameAsLoad([
      header,
      msg("a"),
      { type: "compaction", timestamp: "t", summary: "s", firstKeptEntryIndex: 4, tokensBefore: 1 },
      msg("b"),
      msg("c"),
    ]);
  });

  it("v1 whose records already carry some ids (falls back to two passes)", async () => {
    await expectSameAsLoad([header, msg("a"), { ...msg("b"), id: "abcdef01" }, msg("c")]);
  });

  it("v2 with a hookMessage and v3 untouched", async () => {
    await expectSameAsLoad([
      { ...header, version: 2 },
      { type: "message", id: "aaaaaaaa", parentId: null, timestamp: "t", message: { role: "hookMessage", content: "h" } },
    ]);
    await expectSameAsLoad([
      { ...header, version: 3 },
      { type: "x", id: "aaaaaaaa", parentId: null, timestamp: "t", keep: { me: 1 } },
    ]);
  });
});

describe("migrateFile verification", () => {
  it("heals a blob that is already in the store but corrupt, from the file's own image bytes", async () => {
    const { mkdirSync, readFileSync } = await import("node:fs");
    const { makePng } = await import("../support/png.ts");
    const dir = tempDir();
    const png = makePng(30, 30, 8);
    const hash = sha(png);
    mkdirSync(join(dir, "blobs"));
    writeFileSync(join(dir, "blobs", hash), "not the image"); // corrupt, left by an earlier crash or disk
    const path = join(dir, "s.jsonl");
    const text = `${[
      header,
      {
        type: "message",
        timestamp: "t",
        message: { role: "user", content: [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }] },
      },
    ]
      .map((r) => JSON.stringify(r))
      .join("\n")}\n`;
    writeFileSync(path, text);
    const report = await migrateFile(path, { sessionsDir: join(dir, "store"), blobsDir: join(dir, "blobs"), inPlace: true });
    expect(report).toMatchObject({ status: "migrated", blobsRepaired: 1, blobsDeduplicated: 1, blobsNew: 0 });
    expect(readFileSync(join(dir, "blobs", hash)).equals(png)).toBe(true);
    expect(readFileSync(path, "utf8")).toContain(`blob:sha256:${hash}`);
  });
});

describe("migrateFile with repeated ids", () => {
  it("a v1 file whose records repeat an id migrates, verifies, and keeps every entry (and a second run is current)", async () => {
    const dir = tempDir();
    const path = join(dir, "s.jsonl");
    const records = [header, { ...msg("a"), id: "abcdef01" }, { ...msg("b"), id: "abcdef01" }, msg("c")];
    writeFileSync(path, `${records.map((r) => JSON.stringify(r)).join("\n")}\n`);
    const options = { sessionsDir: join(dir, "store"), blobsDir: join(dir, "blobs") };
    const report = await migrateFile(path, options);
    expect(report.error).toBeUndefined();
    expect(report).toMatchObject({ status: "imported", entries: 3, malformed: 0 });
    const migrated = await SessionManager.open(report.target, { root: dir, readOnly: true });
    expect(migrated.loadReport.malformed).toEqual([]);
    expect(migrated.getEntries().map((e) => (e.message as { content: string }).content)).toEqual(["a", "b", "c"]);
    expect(new Set(migrated.getEntries().map((e) => e.id)).size).toBe(3);
    expect((await migrateFile(path, options)).status).toBe("current");
  });

  it("a v2 file that repeats an id keeps both entries, agreeing with the in-memory load", async () => {
    const v2 = { ...header, version: 2 };
    await expectSameAsLoad([
      v2,
      { ...msg("a"), id: "aaaaaaaa", parentId: null },
      { ...msg("b"), id: "aaaaaaaa", parentId: "aaaaaaaa" },
      { ...msg("c"), id: "cccccccc", parentId: "aaaaaaaa" },
    ]);
  });
});
