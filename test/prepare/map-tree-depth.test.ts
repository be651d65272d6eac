import { describe, expect, it } from "vitest";
import { MAX_WALK_DEPTH, jsonDepthExceeds } from "../../src/format/json-depth.ts";
import { stripTransientFields } from "../../src/prepare/strip-transient-fields.ts";
import { truncateStrings } from "../../src/prepare/truncate-strings.ts";

/** A value nested `depth` arrays deep, parsed from text (no recursion in the test). */
const deep = (depth: number): unknown => JSON.parse(`${"[".repeat(depth)}"x"${"]".repeat(depth)}`);

function codeOf(fn: () => unknown): unknown {
  try {
    fn();
    return "returned";
  } catch (err) {
    return (err as { code?: string }).code ?? (err as Error).name;
  }
}

describe("the prepare pipeline's tree walk on a value nested 20,000 levels deep", () => {
  it("refuses with a code before the recursion can overflow the stack", () => {
    const value = { type: "custom", id: "e1", data: deep(20_000), transient: 1 };
    expect(codeOf(() => stripTransientFields(value, new Set(["transient"])))).toBe("PERSISTENCE_FAILED");
    expect(codeOf(() => truncateStrings(value, 1))).toBe("PERSISTENCE_FAILED");
  });

  it("walks a value at the limit", () => {
    expect(codeOf(() => truncateStrings({ data: deep(MAX_WALK_DEPTH - 2) }, 1))).toBe("returned");
  });

  it("jsonDepthExceeds measures without recursion", () => {
    expect(jsonDepthExceeds(deep(100_000), 1000)).toBe(true);
    expect(jsonDepthExceeds(deep(1000), 1000)).toBe(false);
    expect(jsonDepthExceeds(deep(1001), 1000)).toBe(true);
    expect(jsonDepthExceeds("x", 0)).toBe(false);
  });
});
