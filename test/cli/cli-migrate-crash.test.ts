import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { prng, runTs, spawnTs } from "../support/child.ts";
import { writeImageHeavyLegacySession } from "../support/legacy-images.ts";
import { tempDir } from "../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers/cli-child.ts");
const ROUNDS = Number(process.env.MIGRATE_KILL_ROUNDS ?? 10);

describe("migrate under SIGKILL and memory limits", () => {
  it(`every file is the untouched original or a complete v3 file after a kill; a rerun finishes (${ROUNDS} rounds)`, async () => {
    const originals = tempDir("ts-orig-");
    for (let i = 0; i < 6; i++)
      writeImageHeavyLegacySession(join(originals, `legacy-${i}.jsonl`), { seed: i, count: 6, imageSize: 400_000 });
    const names = readdirSync(originals).sort();
    const expected = new Map<string, number>();
    for (const n of names)
      expected.set(
        n,
        (await SessionManager.open(join(originals, n), { root: tempDir(), readOnly: true, rehydrate: "lazy" })).getEntries().length,
      );
    const random = prng(Number(process.env.MIGRATE_KILL_SEED ?? 5150));
    let killedMidway = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const src = tempDir("ts-kill-");
      const blobs = join(tempDir(), "blobs");
      mkdirSync(blobs);
      for (const n of names) copyFileSync(join(originals, n), join(src, n));
      const child = spawnTs(CHILD, ["migrate", src, "--in-place", "--blobs-dir", blobs]);
      const delay = 250 + Math.floor(random() * 700);
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_c, sig) => resolve(sig)));
      const timer = setTimeout(() => child.kill("SIGKILL"), delay);
      const signal = await exited;
      clearTimeout(timer);
      if (signal === "SIGKILL") killedMidway++;
      let done = 0;
      for (const n of names) {
        const path = join(src, n);
        const bytes = readFileSync(path);
        if (bytes.equals(readFileSync(join(originals, n)))) continue;
        done++;
        const m = await SessionManager.open(path, { blobsDir: blobs, readOnly: true, rehydrate: "lazy" });
        expect(m.header.version, `${n} round ${round}`).toBe(3);
        expect(m.loadReport.malformed).toEqual([]);
        expect(m.loadReport.tornTail).toBe(false);
        expect(m.getEntries()).toHaveLength(expected.get(n)!);
        for (const h of readFileSync(path, "utf8").matchAll(/blob:sha256:([0-9a-f]{64})/g))
          expect(statSync(join(blobs, h[1]!)).isFile()).toBe(true);
      }
      // the killed run's locks go stale after lockStaleMs; age them instead of sleeping
      for (const n of readdirSync(src).filter((x) => x.endsWith(".lock")))
        utimesSync(join(src, n), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
      const rerun = await cli(["migrate", src, "--in-place", "--blobs-dir", blobs, "--json"]);
      expect(rerun.code).toBe(0);
      const statuses = rerun.records.filter((r) => r.type === "file").map((r) => r.status);
      expect(statuses.filter((s) => s === "current")).toHaveLength(done);
      const verify = await cli(["verify", src, "--blobs-dir", blobs]);
      expect(verify.code).toBe(0);
    }
    expect(killedMidway).toBeGreaterThan(0);
    console.log(`migrate kill: ${ROUNDS} rounds, ${killedMidway} killed mid-run, lost = 0`);
  }, 300_000);

  it("migrates a legacy file with 300 MB of inline images in a child limited to --max-old-space-size=128", async () => {
    const src = tempDir();
    const root = tempDir();
    const path = join(src, "huge.jsonl");
    writeImageHeavyLegacySession(path, { seed: 9, count: 100, imageSize: 2_300_000 });
    expect(statSync(path).size).toBeGreaterThan(300_000_000);
    const run = await runTs(CHILD, ["migrate", src, "--root", root, "--json"], ["--max-old-space-size=128"]);
    expect(run.stderr).not.toMatch(/heap out of memory/i);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout.split("\n").filter(Boolean)[0]!);
    expect(report).toMatchObject({ status: "imported", imagesExternalized: 100, blobsNew: 100, entries: 200 });
    expect(report.bytesAfter).toBeLessThan(200_000);
  }, 300_000);
});
