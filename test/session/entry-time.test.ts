import { describe, expect, it } from "vitest";
import { entryTime } from "../../src/session/session-body-scan.ts";

/**
 * `entryTime` finds a line's first `"timestamp":"<1–64 bytes, no quote or backslash>"` in its bytes
 * (no string of the whole line). The oracle is the regular expression over the line's latin1 text
 * it replaced: every line here must date the same under both, valid or not.
 */
const ORACLE = /"timestamp":"([^"\\]{1,64})"/;

function byOracle(bytes: Buffer): number | null {
  const at = ORACLE.exec(bytes.toString("latin1"))?.[1];
  if (at === undefined) return null;
  const date = new Date(at);
  return Number.isNaN(date.getTime()) || date.getTime() <= 0 ? null : date.getTime();
}

const T = "2025-06-01T09:00:00.000Z";
const LINES: Record<string, string> = {
  "entry time first": `{"type":"message","id":"a","parentId":null,"timestamp":"${T}","message":{"role":"user","content":"hi"}}`,
  "a message's own timestamp after the entry's": `{"type":"message","timestamp":"${T}","message":{"timestamp":"2030-01-01T00:00:00.000Z"}}`,
  "no timestamp": `{"type":"message","id":"a","message":{"role":"user","content":"hi"}}`,
  "numeric timestamp only": `{"type":"message","timestamp":1750000000000}`,
  "empty string, then a valid one": `{"timestamp":"","message":{"timestamp":"${T}"}}`,
  "an escape in the first, a valid second": `{"timestamp":"2025\\u002d06-01","x":{"timestamp":"${T}"}}`,
  "64 bytes (no valid time)": `{"timestamp":"${"1".repeat(64)}"}`,
  "65 bytes, then a valid one": `{"timestamp":"${"1".repeat(65)}","m":{"timestamp":"${T}"}}`,
  "unterminated at the end of the bytes": `{"type":"message","timestamp":"${T}`,
  "key cut at the end": `{"type":"message","timestamp":"`,
  "key inside a string value": `{"text":"say \\"timestamp\\":\\"${T}\\" twice","timestamp":"${T.replace("09", "10")}"}`,
  "the epoch (no time)": `{"timestamp":"1970-01-01T00:00:00.000Z"}`,
  "not a time": `{"timestamp":"yesterday"}`,
  "a date only": `{"timestamp":"2025-06-01"}`,
  "keys overlapping": `{"timestamp":"timestamp":"${T}"}`,
};

describe("entryTime", () => {
  for (const [name, text] of Object.entries(LINES)) {
    it(`dates as the regular expression does: ${name}`, () => {
      const bytes = Buffer.from(text);
      expect(entryTime({ bytes })?.getTime() ?? null).toBe(byOracle(bytes));
    });
  }

  it("reads non-ASCII bytes as latin1, as the oracle does (a time holding them is no time)", () => {
    const bytes = Buffer.concat([Buffer.from('{"timestamp":"2025-06-01T09:00:00.000Z\u00e9"}'), Buffer.from([0xff, 0x0a])]);
    expect(entryTime({ bytes })?.getTime() ?? null).toBe(byOracle(bytes));
  });

  it("agrees with the oracle on seeded random lines built from the pieces that matter", () => {
    let seed = 27;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const pieces = ['"timestamp":"', '"', "\\", T, "2025", "x", "1".repeat(30), ",", "{", "}", ":", "é"];
    let dated = 0;
    for (let n = 0; n < 3000; n++) {
      let text = "";
      for (let k = 1 + Math.floor(random() * 8); k > 0; k--) text += pieces[Math.floor(random() * pieces.length)];
      const bytes = Buffer.from(text);
      const expected = byOracle(bytes);
      if (expected !== null) dated++;
      expect(entryTime({ bytes })?.getTime() ?? null, text).toBe(expected);
    }
    expect(dated).toBeGreaterThan(20); // the pieces do make datable lines
  });

  it("dates the named cases as expected", () => {
    const at = (name: string) => entryTime({ bytes: Buffer.from(LINES[name]!) })?.toISOString() ?? null;
    expect(at("entry time first")).toBe(T);
    expect(at("a message's own timestamp after the entry's")).toBe(T);
    expect(at("an escape in the first, a valid second")).toBe(T);
    expect(at("65 bytes, then a valid one")).toBe(T);
    expect(at("no timestamp")).toBeNull();
    expect(at("unterminated at the end of the bytes")).toBeNull();
    expect(at("the epoch (no time)")).toBeNull();
  });
});
