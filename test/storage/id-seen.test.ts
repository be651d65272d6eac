import { describe, expect, it } from "vitest";
import { IdsSeen } from "../../src/storage/id-seen.ts";

describe("IdsSeen: the entry ids of a pass, as 64-bit hashes", () => {
  it("200,000 distinct ids are each new once and a repeat afterwards, through the table's growth", () => {
    const seen = new IdsSeen();
    const ids = Array.from({ length: 200_000 }, (_, i) => (0x10000000 + i * 7919).toString(16));
    expect(ids.filter((id) => seen.add(id))).toEqual([]);
    expect(ids.every((id) => seen.add(id))).toBe(true);
  });

  it("ids that differ in one character, in length, or are empty-like stay apart", () => {
    const seen = new IdsSeen();
    for (const id of ["a", "b", "ab", "ba", "aa", "a\u0000", "\u0000a", "é", "e\u0301", "0", "00"]) expect(seen.add(id)).toBe(false);
    expect(seen.add("ab")).toBe(true);
  });
});
