import { describe, expect, it } from "vitest";
import { isoTime } from "../../src/format/iso-time.ts";

/** `isoTime(ms)` must be `new Date(ms).toISOString()`, whatever the previous call kept. */
describe("isoTime", () => {
  const edges = [
    0, 1, 9, 10, 99, 100, 999, 1000, 1001, -1, -999, -1000, -1001, -1500, 1_750_000_000_000, 1_750_000_000_999,
    // the last millisecond of year 9999, the first of 10000 (the extended form), year 0 and the one before it
    253_402_300_799_999, 253_402_300_800_000, -62_167_219_200_000, -62_167_219_200_001, 8.64e15, -8.64e15,
  ];

  it("gives toISOString's text at the edges, after any previous call", () => {
    for (const before of [Number.NaN, ...edges]) {
      for (const ms of edges) {
        if (!Number.isNaN(before)) isoTime(before);
        expect(isoTime(ms), `${ms} after ${before}`).toBe(new Date(ms).toISOString());
        expect(isoTime(ms), `${ms} again`).toBe(new Date(ms).toISOString());
      }
    }
  });

  it("gives toISOString's text for every millisecond of a run of seconds, in order and in seeded random order", () => {
    const start = 1_764_124_799_000; // seconds across a day's end
    for (let ms = start; ms < start + 3000; ms++) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    let seed = 27;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    for (let n = 0; n < 20_000; n++) {
      const ms = Math.floor(start + (random() - 0.5) * 4000);
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it("throws toISOString's RangeError for an invalid time, and formats a fraction as Date does (truncated)", () => {
    isoTime(1000);
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
    expect(isoTime(1000.5)).toBe(new Date(1000.5).toISOString());
    expect(isoTime(1000.5)).toBe("1970-01-01T00:00:01.000Z");
  });
});
