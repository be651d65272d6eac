import { afterEach, describe, expect, it } from "vitest";
import {
  appendHandles,
  type EvictableHandle,
  forgetHandle,
  openHandleCount,
  openWithRelief,
  touchHandle,
} from "../../src/session/append-handles.ts";

const defaultLimit = appendHandles.limit;
const made: EvictableHandle[] = [];

/** A handle that records its evictions. */
function handle(name: string, evicted: string[]): EvictableHandle {
  const h = { evict: () => evicted.push(name) };
  made.push(h);
  return h;
}

afterEach(() => {
  for (const h of made.splice(0)) forgetHandle(h);
  appendHandles.limit = defaultLimit;
});

describe("append handle order", () => {
  it("without a cold handle, evicts the least recently used, however often the newest one is touched in a row", () => {
    appendHandles.limit = 2;
    const evicted: string[] = [];
    const [a, b, c] = ["a", "b", "c"].map((n) => handle(n, evicted)) as [EvictableHandle, EvictableHandle, EvictableHandle];
    touchHandle(a);
    touchHandle(b);
    touchHandle(b);
    touchHandle(a); // a is newest again: b is now the least recently used
    touchHandle(a);
    touchHandle(c);
    expect(evicted).toEqual(["b"]);
    expect(openHandleCount()).toBe(2);
  });

  it("a lowered limit applies at the next touch, of the newest handle too", () => {
    appendHandles.limit = 3;
    const evicted: string[] = [];
    const [a, b, c] = ["a", "b", "c"].map((n) => handle(n, evicted)) as [EvictableHandle, EvictableHandle, EvictableHandle];
    touchHandle(a);
    touchHandle(b);
    touchHandle(c);
    appendHandles.limit = 1;
    touchHandle(c);
    // Newest cold first: b was opened after a.
    expect(evicted).toEqual(["b", "a"]);
    expect(openHandleCount()).toBe(1);
  });

  it("a forgotten newest handle is tracked again when touched after others", () => {
    appendHandles.limit = 2;
    const evicted: string[] = [];
    const [a, b, c] = ["a", "b", "c"].map((n) => handle(n, evicted)) as [EvictableHandle, EvictableHandle, EvictableHandle];
    touchHandle(a);
    touchHandle(b);
    forgetHandle(b);
    touchHandle(b); // reopened: counted again
    touchHandle(c);
    expect(evicted).toEqual(["b"]); // the newest cold one: b was opened after a
    touchHandle(a); // a is open: a hit, nothing closed
    expect(evicted).toEqual(["b"]);
    expect(openHandleCount()).toBe(2);
  });

  it("a round-robin over more handles than the limit keeps limit - 1 of them open (one slot churns)", () => {
    appendHandles.limit = 3;
    const evicted: string[] = [];
    const names = ["a", "b", "c", "d", "e"];
    const handles = names.map((n) => handle(n, evicted));
    let touches = 0;
    for (let round = 0; round < 4; round++) {
      for (const h of handles) {
        touchHandle(h);
        touches++;
      }
    }
    // LRU would close one per touch past the first three (17); here a and b stay open throughout.
    expect(evicted.length).toBe(2 + 3 * 3);
    expect(touches - evicted.length).toBe(9);
    expect(evicted).not.toContain("a");
    expect(evicted).not.toContain("b");
    expect(openHandleCount()).toBe(3);
  });

  it("a handle written again stays open while new ones churn", () => {
    appendHandles.limit = 2;
    const evicted: string[] = [];
    const hot = handle("hot", evicted);
    for (let i = 0; i < 20; i++) {
      touchHandle(hot);
      touchHandle(handle(`n${i}`, evicted));
    }
    expect(evicted).not.toContain("hot");
    expect(evicted.length).toBe(19);
  });

  it("a handle unused while every held one could have been written twice is closed (oldest first) instead of churning", () => {
    appendHandles.limit = 3;
    const evicted: string[] = [];
    const [a, b] = [handle("a", evicted), handle("b", evicted)];
    touchHandle(a);
    touchHandle(b);
    touchHandle(a);
    touchHandle(b); // both hot
    const others = ["x", "y"].map((n) => handle(n, evicted));
    // Held: a, b, x, y. A cycle over x and y only: a and b turn stale after 2 x 4 touches.
    for (let i = 0; i < 12; i++) touchHandle(others[i % 2]!);
    // x and y churned in the one free slot until a (older than b) turned stale.
    expect(evicted.filter((n) => n === "a" || n === "b")).toEqual(["a"]);
    expect(openHandleCount()).toBe(3);
    const before = evicted.length;
    for (let i = 0; i < 10; i++) touchHandle(others[i % 2]!);
    expect(evicted.length).toBe(before); // x and y both fit now: no more closing
  });

  it("an open out of descriptors gives idle handles back, lowers the limit and succeeds", () => {
    appendHandles.limit = 10;
    const evicted: string[] = [];
    const handles = ["a", "b", "c", "d"].map((n) => handle(n, evicted));
    for (const h of handles) touchHandle(h);
    let failures = 1;
    const opened = openWithRelief(() => {
      if (failures-- > 0) throw Object.assign(new Error("too many open files"), { code: "EMFILE" });
      return 42;
    });
    expect(opened).toBe(42);
    expect(appendHandles.limit).toBe(3);
    expect(evicted.length).toBe(2); // room for the newly opened one within the lowered limit
    expect(openHandleCount()).toBe(2);
  });

  it("an open out of descriptors with no handle to give back fails with the system's error", () => {
    appendHandles.limit = 10;
    const fail = () => {
      throw Object.assign(new Error("too many open files"), { code: "EMFILE" });
    };
    expect(() => openWithRelief(fail)).toThrow(expect.objectContaining({ code: "EMFILE" }));
    const evicted: string[] = [];
    const a = handle("a", evicted);
    touchHandle(a);
    // The handle being opened is never the one given back.
    expect(() => openWithRelief(fail, a)).toThrow(expect.objectContaining({ code: "EMFILE" }));
    expect(evicted).toEqual([]);
  });
});
