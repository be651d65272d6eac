import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { io, type Io } from "../../src/io.ts";
import { tempDir } from "../support/temp-dir.ts";

const COUNTED = ["readdirSync", "openSync", "lstatSync", "statSync"] as const;
type Counted = (typeof COUNTED)[number];

const originals = new Map<Counted, Io[Counted]>();
let calls: Record<Counted, number>;

/** Counts the directory listings and file-system lookups made through the I/O seam (nothing is faked). */
function countIo(): void {
  calls = { readdirSync: 0, openSync: 0, lstatSync: 0, statSync: 0 };
  for (const name of COUNTED) {
    const original = io[name] as (...args: unknown[]) => unknown;
    originals.set(name, io[name]);
    (io as Record<string, unknown>)[name] = (...args: unknown[]) => {
      calls[name]++;
      return original(...args);
    };
  }
}

afterEach(() => {
  for (const [name, fn] of originals) (io as Record<string, unknown>)[name] = fn;
  originals.clear();
});

const syscalls = () => calls.openSync + calls.lstatSync + calls.statSync;

describe("filling an artifacts directory costs O(1) per save (item 7)", () => {
  it("N saves, each followed by a lookup by name, list the directory a constant number of times", () => {
    const N = 400;
    const store = new ArtifactStore(join(tempDir("ts-art-scale-"), "s"));
    countIo();
    for (let i = 0; i < N; i++) {
      store.save(`content ${i}`, { toolType: "bash", name: `n${i}` });
      expect(store.get(`n${i}`)).toBe(`content ${i}`);
    }
    // one listing to find the first id, one to build the name index; none per save or lookup
    expect(calls.readdirSync).toBeLessThanOrEqual(2);
    const perSave = syscalls() / N;
    expect(perSave).toBeLessThan(12);
    console.log(`scaling: ${N} saves + name lookups: ${calls.readdirSync} listings, ${perSave.toFixed(1)} opens/stats per save`);
  });

  it("a reopened store lists once, then a second store saving alongside costs it no listing", () => {
    const N = 200;
    const dir = join(tempDir("ts-art-scale-"), "s");
    const filler = new ArtifactStore(dir);
    for (let i = 0; i < N; i++) filler.save(`old ${i}`, { toolType: "bash", name: `old${i}` });
    const reopened = new ArtifactStore(dir);
    const other = new ArtifactStore(dir);
    countIo();
    expect(reopened.get("old7")).toBe("old 7");
    const afterFirst = calls.readdirSync;
    for (let i = 0; i < N; i++) {
      const mine = reopened.save(`mine ${i}`, { toolType: "bash", name: `mine${i}` });
      const theirs = other.save(`theirs ${i}`, { toolType: "bash", name: `theirs${i}` });
      expect(Number(theirs.id)).not.toBe(Number(mine.id));
      expect(reopened.get(`theirs${i}`)).toBe(`theirs ${i}`);
      expect(other.get(`mine${i}`)).toBe(`mine ${i}`);
      expect(reopened.get(`old${i}`)).toBe(`old ${i}`);
    }
    expect(afterFirst).toBe(1);
    // reopened: first id + name index; other: the same two; no listing per save or lookup
    expect(calls.readdirSync).toBeLessThanOrEqual(4);
    expect(syscalls() / (2 * N)).toBeLessThan(16);
    expect(new Set(new ArtifactStore(dir).list().map((r) => r.id)).size).toBe(3 * N);
  });

  it("allocating N agent outputs lists the directory once", () => {
    const N = 300;
    const store = new ArtifactStore(join(tempDir("ts-art-scale-"), "s"));
    countIo();
    const ids = Array.from({ length: N }, () => store.allocateAgentOutputId("reviewer"));
    expect(ids.slice(0, 3)).toEqual(["reviewer", "reviewer-2", "reviewer-3"]);
    expect(new Set(ids).size).toBe(N);
    expect(calls.readdirSync).toBe(1);
    expect(syscalls() / N).toBeLessThan(4);
  });
});
