import { describe, expect, it } from "vitest";
import { baseReport, migrateFailed, migrateFileText, migrateTotals, migrateTotalsText } from "../../src/maintenance/migrate-report.ts";

const size = (n: number) => `${n}B`;

describe("migrate report", () => {
  it("prints a file's counters in declared order, the optional ones only when non-zero", () => {
    const r = { ...baseReport("/a.jsonl"), status: "imported" as const, fromVersion: 1, bytesBefore: 10, bytesAfter: 4 };
    expect(migrateFileText(r, size)).toBe("imported v1→v3 10B→4B images 0 blobs 0 new/0 dedup");
    const busy = { ...r, imagesExternalized: 2, imagesKeptInline: 1, blobsNew: 1, blobsDeduplicated: 1, blobsRepaired: 3 };
    const text = migrateFileText({ ...busy, malformed: 4, linesSplit: 5, tornTail: true }, size);
    expect(text).toBe(
      "imported v1→v3 10B→4B images 2 (1 not base64, kept inline) blobs 1 new/1 dedup/3 repaired malformed 4 glued lines split 5 to" +
        "rn tail repaired",
    );
  });

  it("sums the totalled counters and tallies statuses (a conflict counted once, yet the run fails)", () => {
    const a = { ...baseReport("/a"), status: "imported" as const, bytesBefore: 10, imagesExternalized: 1, malformed: 2 };
    const b = { ...baseReport("/b"), status: "conflict" as const, bytesBefore: 5, blobsRepaired: 1 };
    const c = { ...baseReport("/c"), status: "continued" as const };
    const totals = migrateTotals([a, b, c]);
    expect(totals).toEqual({
      type: "totals",
      files: 3,
      migrated: 1,
      current: 0,
      continued: 1,
      conflicts: 1,
      planned: 0,
      failed: 0,
      bytesBefore: 15,
      bytesAfter: 0,
      imagesExternalized: 1,
      blobsNew: 0,
      blobsDeduplicated: 0,
      blobsRepaired: 1,
      linesCaughtUp: 0,
    });
    expect(migrateTotalsText(totals, size)).toBe(
      "3 file(s): 1 migrated, 0 already current, 1 continued in the store (left alone), 1 in conflict (store copy left alone), " +
        "0 planned, 0 failed; 15B → 0B; 1 image(s) externalized, 0 new blob(s), 0 deduplicated, 1 corrupt blob(s) repaired",
    );
    expect(migrateFailed(totals)).toBe(true);
    expect(migrateFailed(migrateTotals([a, c]))).toBe(false);
  });
});
