import { statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeImageHeavyLegacySession } from "../support/legacy-images.ts";
import { runTs } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";
import { blobDirEntries } from "../support/blob-dir.ts";

const CHILD = join(import.meta.dirname, "helpers/lazy-open-child.ts");

describe("lazy rehydration of an image-heavy legacy session", () => {
  it("opens ~150 MB of inline images under --max-old-space-size=128 and restores a branch's images", async () => {
    const root = tempDir();
    const path = join(root, "huge-legacy.jsonl");
    const imageSize = 1_900_000; // ~2.5 MB of base64 per line, as in pi#9613
    const count = 60;
    writeImageHeavyLegacySession(path, { seed: 42, count, imageSize });
    const before = statSync(path).size;
    expect(before).toBeGreaterThan(150_000_000);

    const { code, stdout, stderr } = await runTs(CHILD, [path, root, "42", String(imageSize)], ["--max-old-space-size=128"]);
    expect(stderr).not.toMatch(/heap out of memory/i);
    expect(code).toBe(0);
    const report = JSON.parse(stdout.trim().split("\n").at(-1)!);
    expect(report).toMatchObject({ entries: count * 2, migratedFrom: 1, images: 2, matches: [true, true] });
    expect(report.heapAfterOpen).toBeLessThan(128 * 1024 * 1024);
    // the rewritten session holds refs only; every image is one blob
    expect(statSync(path).size).toBeLessThan(100_000);
    expect(blobDirEntries(join(root, "blobs"))).toHaveLength(count);
  }, 180_000);
});
