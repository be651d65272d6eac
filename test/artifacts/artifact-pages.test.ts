import { constants } from "node:buffer";
import { appendFileSync, closeSync, openSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { bytesToText } from "../../src/artifacts/artifact-values.ts";
import { pageFile } from "../../src/artifacts/file-pages.ts";
import { pageLines } from "../../src/artifacts/line-pages.ts";
import { prng, runTs } from "../support/child.ts";
import { codeOf } from "../support/error-code.ts";
import { tempDir } from "../support/temp-dir.ts";
import { ARTIFACT_CHILD } from "./helpers/run-child.ts";

const MiB = 1 << 20;

describe("paged reads stream from the file (item 5)", () => {
  it("a 5-line page of a 600 MiB artifact (and agent output) is read by a child whose heap is 64 MiB", async () => {
    const dir = join(tempDir("ts-art-big-"), "s");
    const store = new ArtifactStore(dir);
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1} é\n`).join("");
    const ref = store.save(lines, { toolType: "bash" });
    // Grow the content file fast: a sparse run of NUL bytes (one long line), then two more lines.
    const agent = store.saveAgentOutput("big", lines);
    for (const path of [ref.path, agent.path]) {
      truncateSync(path, 600 * MiB);
      appendFileSync(path, "\ntail 1\ntail 2");
    }
    const size = statSync(ref.path).size;
    const out = await runTs(ARTIFACT_CHILD, ["page", dir, ref.id, "3", "5", "big"], ["--max-old-space-size=64"]);
    expect(out.code, out.stderr.slice(0, 2000)).toBe(0);
    const result = JSON.parse(out.stdout) as { read: unknown; url: unknown; agent: unknown; maxRssBytes: number };
    const page = { offset: 3, lineCount: 5, totalLines: 13, hasMore: true };
    expect(result.read).toEqual({ content: "line 3 é\nline 4 é\nline 5 é\nline 6 é\nline 7 é\n", ...page });
    expect(result.url).toEqual({ content: "line 3 é\nline 4 é\nline 5 é\nline 6 é\nline 7 é\n", page });
    expect(result.agent).toEqual(result.url);
    console.log(`big page: ${(size / MiB).toFixed(0)} MiB artifact, child peak RSS ${(result.maxRssBytes / MiB).toFixed(0)} MiB`);
    expect(result.maxRssBytes).toBeLessThan(size / 2);
  }, 120_000);

  it("pages read in chunks equal pages cut from the whole text, at every chunk size", () => {
    const dir = tempDir("ts-art-pages-");
    const rand = prng(11);
    const PIECES = ["a", "é", "😀", "\n", "\r\n", "\n\n", "xyz"];
    for (let round = 0; round < 150; round++) {
      let text = "";
      const pieces = Math.floor(rand() * 40);
      for (let i = 0; i < pieces; i++) text += PIECES[Math.floor(rand() * PIECES.length)];
      const path = join(dir, `t${round}`);
      writeFileSync(path, text);
      const fd = openSync(path, "r");
      try {
        for (const chunk of [1, 2, 3, 7, 64]) {
          for (const offset of [1, 2, 3, 5, 40]) {
            for (const limit of [undefined, 1, 2, 4]) {
              const options = limit === undefined ? { offset } : { offset, limit };
              expect(pageFile(fd, options, chunk), JSON.stringify({ text, chunk, options })).toEqual(pageLines(text, options));
            }
          }
        }
      } finally {
        closeSync(fd);
      }
    }
  });

  it("content too long for one string is a coded error pointing at paged reads, not a RangeError", () => {
    // Zero-filled memory is only mapped, not touched: the length check refuses it first.
    const huge = Buffer.alloc(constants.MAX_STRING_LENGTH + 1);
    expect(codeOf(() => bytesToText(huge, "7"))).toBe("PERSISTENCE_FAILED");
  });
});
