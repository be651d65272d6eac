// What every peer child shares: read its Job from argv, time, peak RSS, print one Result line.
// Runs on Node (tsx) and on Bun.
import { copyFileSync, cpSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { median } from "../stats.ts";
import type { Job, Result } from "./workloads.ts";

/** The Job the parent passed as the first argument. */
export function readJob(): Job {
  return JSON.parse(process.argv[2]!) as Job;
}

/** Peak resident set of this process in MB (VmHWM: the same source on Node and Bun). */
export function peakRssMB(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** Milliseconds `fn` took. */
export async function time(fn: () => unknown): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** Appends `images` and `texts` alternately through `append`, timing each; p50s in µs. */
export function appendP50s(append: (entry: Record<string, unknown>) => unknown, images: object[], texts: object[]): Result {
  const image: number[] = [];
  const text: number[] = [];
  for (let i = 0; i < images.length; i++) {
    let t = performance.now();
    append(images[i] as Record<string, unknown>);
    image.push((performance.now() - t) * 1000);
    t = performance.now();
    append(texts[i] as Record<string, unknown>);
    text.push((performance.now() - t) * 1000);
  }
  return { imageP50Us: median(image), textP50Us: median(text) };
}

/** The child's own copy of the job's input file (untimed; also warms the page cache for every peer alike). */
export function ownCopy(job: Job): string {
  const copy = join(job.work, basename(job.source!));
  copyFileSync(job.source!, copy);
  return copy;
}

/** The child's own copy of a session directory (W5: the listing may write an index next to the files). */
export function ownTree(job: Job): string {
  const copy = join(job.work, "sessions", basename(job.source!));
  cpSync(job.source!, copy, { recursive: true });
  return copy;
}

/** Copies the job's blob files into `dir` (untimed): where the implementation looks for its blobs. */
export function ownBlobs(job: Job, dir: string): void {
  cpSync(job.blobs!, dir, { recursive: true });
}

/** Throws unless `path` holds at least `lines` lines: the appends being timed really reached the file. */
export function checkLines(path: string, lines: number): void {
  const buf = readFileSync(path);
  let n = 0;
  for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) n++;
  if (n < lines) throw new Error(`${path} holds ${n} lines, expected at least ${lines}`);
}

/** Prints the result (with peak RSS) as the last stdout line. */
export function report(result: Result): void {
  process.stdout.write(`${JSON.stringify({ ...result, rssMB: peakRssMB() })}\n`);
}
