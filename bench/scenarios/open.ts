import { closeSync, createReadStream, mkdtempSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ndjson from "ndjson";
import { SessionManager } from "../../src/session/session-manager.ts";
import { median, timeRuns } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { writeTextSession } from "../workload.ts";

/**
 * The physical-limit baseline: 1 MiB reads, split on LF, JSON.parse per line, objects kept in an
 * array (a load keeps what it parsed; discarding it would measure a different job).
 */
export function scanAndParse(path: string): unknown[] {
  const fd = openSync(path, "r");
  const buf = Buffer.allocUnsafe(1 << 20);
  let carry: Buffer | null = null;
  const out: unknown[] = [];
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      let chunk = buf.subarray(0, n);
      if (carry) {
        chunk = Buffer.concat([carry, chunk]);
        carry = null;
      }
      let start = 0;
      for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
        out.push(JSON.parse(chunk.toString("utf8", start, nl)));
        start = nl + 1;
      }
      if (start < chunk.length) carry = Buffer.from(chunk.subarray(start));
    }
  } finally {
    closeSync(fd);
  }
  return out;
}

function ndjsonParse(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const out: unknown[] = [];
    createReadStream(path)
      .pipe(ndjson.parse())
      .on("data", (row: unknown) => out.push(row))
      .on("end", () => resolve(out.length))
      .on("error", reject);
  });
}

/** Eager open of a text session against the chunked scanner and the ndjson package. */
export async function benchOpen(ctx: BenchContext): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "ts-bench-open-"));
  try {
    const path = join(dir, "text-session.jsonl");
    writeTextSession(path, ctx.sizeBytes, 11);
    const mb = statSync(path).size / 1e6;
    const repeats = ctx.repeats;
    const oursTimes: number[] = [];
    const baseTimes: number[] = [];
    const ndTimes: number[] = [];
    // interleave so machine noise hits all three alike
    await timeRuns(1, 0, async () => {
      scanAndParse(path);
      await ndjsonParse(path);
      await (await SessionManager.open(path, { root: dir, readOnly: true })).close();
    });
    for (let i = 0; i < repeats; i++) {
      baseTimes.push(...(await timeRuns(1, 0, () => scanAndParse(path))));
      ndTimes.push(...(await timeRuns(1, 0, () => ndjsonParse(path))));
      oursTimes.push(...(await timeRuns(1, 0, async () => (await SessionManager.open(path, { root: dir, readOnly: true })).close())));
    }
    const ours = mb / (median(oursTimes) / 1000);
    const base = mb / (median(baseTimes) / 1000);
    const nd = mb / (median(ndTimes) / 1000);
    return [
      {
        scenario: "open eager, text session",
        unit: "MB/s",
        ours,
        baseline: base,
        baselineName: "chunked scan+JSON.parse",
        ratio: ours / base,
        target: "≥ 0.8×",
        met: ours / base >= 0.8,
        extra: { sizeMB: Number(mb.toFixed(1)) },
      },
      {
        scenario: "open eager vs ndjson",
        unit: "MB/s",
        ours,
        baseline: nd,
        baselineName: "ndjson parse stream",
        ratio: ours / nd,
        target: "≥ 3×",
        met: ours / nd >= 3,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
