import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { closesFence, fenceOpenLength, inlineSummaryOf, isMarkerLine, summaryOf } from "../../src/artifacts/block-headers.ts";
import { resolveInternalUrl } from "../../src/artifacts/internal-urls.ts";
import { parseJsonQuery } from "../../src/artifacts/json-query.ts";
import { expandArtifactReferences, extractArtifactBlocks } from "../../src/artifacts/reveal.ts";
import { prng } from "../support/child.ts";
import { cpuMs } from "../support/cpu-clock.ts";
import { tempDir } from "../support/temp-dir.ts";

/**
 * CPU milliseconds per call: repeated until 30 ms of CPU have been used, best of five (no absolute
 * limit is asserted). CPU time, not the wall clock: other processes of a loaded machine do not count.
 */
function msPerCall(fn: () => void): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    const start = cpuMs();
    let calls = 0;
    let elapsed = 0;
    do {
      fn();
      calls++;
      elapsed = cpuMs() - start;
    } while (elapsed < 30);
    best = Math.min(best, elapsed / calls);
  }
  return best;
}

/** Growth of the cost from size n to 8n: about 8 for a linear parser, about 64 for a quadratic one. */
function growth(make: (n: number) => string, run: (input: string) => void, n: number): number {
  const small = make(n);
  const big = make(8 * n);
  // warm up the JIT on both shapes first
  run(small);
  run(big);
  return msPerCall(() => run(big)) / msPerCall(() => run(small));
}

const N = 5_000;
/** Half of what a quadratic parser shows, four times what a linear one should: room for a loaded machine. */
const LINEAR_LIMIT = 32;

describe("parsers of model output run in linear time (item 6)", () => {
  const store = () => new ArtifactStore(join(tempDir("ts-art-lin-"), "s"));

  type Runner = (s: ArtifactStore) => (input: string) => void;
  const extract: Runner = (s) => (t) => void extractArtifactBlocks(t, s);
  const expand: Runner = (s) => (t) => void expandArtifactReferences(t, s);
  const query: Runner = () => (t) => void parseJsonQuery(t);
  const resolve: Runner = (s) => (t) => void resolveInternalUrl(t, { session: { artifacts: s } });
  const cases: [string, (n: number) => string, Runner][] = [
    ["SUMMARY: line padded with spaces", (n) => `ARTIFACT\nSUMMARY: a${" ".repeat(n)}b\nbody\n`, extract],
    ["one-line ARTIFACT SUMMARY: header padded with tabs", (n) => `ARTIFACT  SUMMARY: a${"\t ".repeat(n / 2)}b\nbody\n`, extract],
    ["SUMMARY: line ending in spaces and a carriage return", (n) => `ARTIFACT\nSUMMARY: a${" ".repeat(n)}\r\nbody\n`, extract],
    ["block with thousands of blank lines", (n) => `ARTIFACT\nSUMMARY: s\n${"\n".repeat(n)}x\n${"\n".repeat(n)}`, extract],
    ["fence of thousands of tildes never closed", (n) => `ARTIFACT\nSUMMARY: s\n${"~".repeat(n)}\n${"~ \n".repeat(n / 4)}`, extract],
    ["<artifact tag with endless attributes", (n) => `<artifact${' a="x"'.repeat(n / 6)} `, expand],
    ["<artifact tag padded with spaces", (n) => `<artifact${" ".repeat(n)}x`, expand],
    ["jq query of many steps", (n) => `.a${"[0].b".repeat(n / 6)}`, query],
    ["agent:// query string of many parameters", (n) => `agent://a?${"x=1&".repeat(n / 4)}q=.`, resolve],
  ];

  for (const [name, make, runner] of cases) {
    it(`${name}: 8x the input costs far less than 64x`, () => {
      const s = store();
      s.saveAgentOutput("a", "{}");
      const ratio = growth(make, runner(s), N);
      console.log(`linear: ${name}: x8 input -> x${ratio.toFixed(1)} time`);
      expect(ratio).toBeLessThan(LINEAR_LIMIT);
    }, 120_000);
  }
});

describe("the scanning header parsers accept exactly what the regexes did", () => {
  const MARKER = /^\s*ARTIFACT\s*$/;
  const INLINE_MARKER = /^\s*ARTIFACT\s+SUMMARY:[ \t]*(.*?)\s*$/;
  const SUMMARY_LINE = /^\s*SUMMARY:[ \t]*(.*?)\s*$/;
  const FENCE_OPEN = /^\s*(~{3,})/;
  const PARTS = [" ", "\t", "\r", "\u00a0", "\u2028", "\ufeff", "\v", "a", "é", ":", "~", "~~~", "ARTIFACT", "SUMMARY:", "SUMMARY", "x y"];

  it("on 20,000 random lines built from the tricky parts", () => {
    const rand = prng(7);
    for (let i = 0; i < 20_000; i++) {
      let line = "";
      const parts = 1 + Math.floor(rand() * 7);
      for (let p = 0; p < parts; p++) line += PARTS[Math.floor(rand() * PARTS.length)];
      expect(isMarkerLine(line), JSON.stringify(line)).toBe(MARKER.test(line));
      expect(inlineSummaryOf(line), JSON.stringify(line)).toBe(INLINE_MARKER.exec(line)?.[1] ?? null);
      expect(summaryOf(line), JSON.stringify(line)).toBe(SUMMARY_LINE.exec(line)?.[1] ?? null);
      expect(fenceOpenLength(line), JSON.stringify(line)).toBe((FENCE_OPEN.exec(line)?.[1] ?? "").length);
      for (const n of [3, 4]) expect(closesFence(line, n), JSON.stringify(line)).toBe(new RegExp(`^\\s*~{${n},}\\s*$`).test(line));
    }
  });
});
