import { describe, expect, it } from "vitest";
import { splitGluedObjects } from "../../src/format/split-glued.ts";

describe("splitGluedObjects", () => {
  it("splits objects written back to back, whatever braces and quotes their strings hold", () => {
    const a = '{"type":"message","text":"a } { \\" \\\\","n":[1,{"x":"]"}]}';
    const b = '{"type":"compaction","summary":"}{"}';
    expect(splitGluedObjects(a + b)).toEqual([a, b]);
    expect(splitGluedObjects(`${a} \t${b}${a}`)).toEqual([a, b, a]);
  });

  it("returns null for one object, a truncated one, or anything else around them", () => {
    expect(splitGluedObjects('{"type":"x"}')).toBeNull();
    expect(splitGluedObjects('{"type":"x"}{"type":')).toBeNull();
    expect(splitGluedObjects('{"type":"x"},{"type":"y"}')).toBeNull();
    expect(splitGluedObjects('[{"type":"x"}]')).toBeNull();
    expect(splitGluedObjects('{"type":"x"}{"type":"y"}garbage')).toBeNull();
    expect(splitGluedObjects('{"a":"unterminated}{"b":1}')).toBeNull();
  });

  it("is linear: one read per character, however many objects the line holds", () => {
    // Every character is read exactly once: a scanner that retried per object would read more.
    const obj = `{"type":"m","t":"${"x".repeat(50)}"}`;
    let reads = 0;
    const original = String.prototype.charCodeAt;
    String.prototype.charCodeAt = function (this: string, i: number) {
      reads++;
      return original.call(this, i);
    };
    try {
      const text = obj.repeat(2000);
      reads = 0;
      expect(splitGluedObjects(text)).toHaveLength(2000);
      expect(reads).toBe(text.length);
    } finally {
      String.prototype.charCodeAt = original;
    }
  });
});
