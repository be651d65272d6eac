import { describe, expect, it } from "vitest";
import { relateSessions, relateSessionStreams, type SessionRelation } from "../../src/storage/session-relation.ts";

async function* stream(lines: readonly string[]): AsyncIterable<string> {
  yield* lines;
}

const H = "header";
/** [incoming, stored, relation]: header first, then entry lines. */
const CASES: Array<[string[], string[], SessionRelation]> = [
  [[H, "a", "b"], [H, "a", "b"], "same"],
  [[H], [H], "same"],
  [[H, "a"], [H, "a", "b"], "storeAhead"],
  [[H, "a", "b"], ["moved", "a", "b"], "storeAhead"],
  [[H, "a"], ["moved", "a", "b"], "storeAhead"],
  [[H, "a", "b"], [H, "a"], "sourceAhead"],
  [[H, "a", "b"], [H], "sourceAhead"],
  [[H, "a", "b"], ["moved", "a"], "diverged"],
  [[H, "a", "x"], [H, "a", "b"], "diverged"],
  [[H, "x"], [H, "a", "b"], "diverged"],
  [[H, "a", "b", "c"], [H, "a", "x"], "diverged"],
];

describe("the one import rule (relateSessions): same / storeAhead / sourceAhead / diverged", () => {
  it.each(CASES)("%j against %j is %s, over arrays and streams, strings and bytes", async (incoming, stored, relation) => {
    expect(relateSessions(incoming[Symbol.iterator](), stored[Symbol.iterator]())).toBe(relation);
    expect(await relateSessionStreams(stream(incoming), stream(stored))).toBe(relation);
    const bytes = (lines: string[]) => lines.map((l) => Buffer.from(`${l}\n`))[Symbol.iterator]();
    expect(relateSessions(bytes(incoming), bytes(stored))).toBe(relation);
  });

  it("reads a stream only as far as the answer needs (a diverged first line stops both)", async () => {
    let read = 0;
    async function* counted(): AsyncIterable<string> {
      for (const l of [H, "x", "y", "z"]) {
        read++;
        yield l;
      }
    }
    expect(await relateSessionStreams(counted(), stream([H, "a", "b", "c"]))).toBe("diverged");
    expect(read).toBe(2);
  });
});
