import { afterEach, describe, expect, it } from "vitest";
import { appendHandles, type EvictableHandle, forgetHandle, openHandleCount, touchHandle } from "../../src/session/append-handles.ts";

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

describe("append handle order (LRU)", () => {
  it("evicts the least recently used, however often the newest one is touched in a row", () => {
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
    expect(evicted).toEqual(["a", "b"]);
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
    expect(evicted).toEqual(["a"]);
    expect(openHandleCount()).toBe(2);
  });
});
