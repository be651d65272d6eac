import { describe, expect, it } from "vitest";
import { DESCEND, mapTree, REMOVE, type TreeMapper } from "../../src/prepare/map-tree.ts";

/** Doubles numbers, drops `gone` keys, records every visit. */
function mapper(visits: Array<[unknown, string | null]>): TreeMapper {
  return {
    visit: (value, key) => {
      visits.push([value, key]);
      if (key === "gone") return REMOVE;
      return typeof value === "number" ? value * 2 : DESCEND;
    },
  };
}

describe("mapTree", () => {
  it("returns the very same value when nothing changes, visiting every slot", () => {
    const input = { a: ["x", { b: "y" }], c: { d: null } };
    const visits: Array<[unknown, string | null]> = [];
    expect(mapTree(input, mapper(visits))).toBe(input);
    expect(visits.map(([, key]) => key)).toEqual([null, "a", null, null, "b", "c", "d"]);
  });

  it("copies only the path to a change, shares the rest, and never mutates its input", () => {
    const shared = { s: ["untouched"] };
    const input = { keep: shared, list: ["a", { n: 1 }], gone: "x" };
    const before = structuredClone(input);
    const out = mapTree(input, mapper([]));
    expect(out).toEqual({ keep: { s: ["untouched"] }, list: ["a", { n: 2 }] });
    expect(out).not.toBe(input);
    expect(out.keep).toBe(shared);
    expect(out.list).not.toBe(input.list);
    expect(input).toEqual(before);
  });

  it("treats an own __proto__ key as data, copying and writing it without touching prototypes", () => {
    const input = JSON.parse('{"__proto__": {"n": 1}, "other": "x"}') as Record<string, unknown>;
    const out = mapTree(input, mapper([]));
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, "__proto__")).toBe(true);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"n":2},"other":"x"}');
    expect(JSON.stringify(input)).toBe('{"__proto__":{"n":1},"other":"x"}');
  });

  it("passes where the parent object sits and lets a mapper fix up a changed copy", () => {
    const seen: string[] = [];
    const input = { outer: { inner: { v: 1 } }, items: [{ v: 1 }] };
    const out = mapTree(input, {
      visit: (value, key, _parent, where) => {
        if (key === "v") seen.push(`${where.key}`);
        return typeof value === "number" ? value + 1 : DESCEND;
      },
      changed: (_original, copy) => {
        copy.touched = true;
      },
    });
    expect(seen).toEqual(["inner", "null"]);
    expect(out).toEqual({ outer: { inner: { v: 2, touched: true }, touched: true }, items: [{ v: 2, touched: true }], touched: true });
  });

  it("refuses REMOVE for an array item", () => {
    expect(() => mapTree(["a"], { visit: (value) => (value === "a" ? REMOVE : DESCEND) })).toThrow(TypeError);
  });
});
