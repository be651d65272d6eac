// Which children one run spawns and which rows the table prints, for the selected workloads and sizes.
// Writes the seeded inputs (W3/W4 sessions, the W5 bucket, the W6 source) into `root`.
import { statSync } from "node:fs";
import { join } from "node:path";
import { cwdBucket } from "../../src/session/paths.ts";
import { IMPLS, type Impl } from "./spawn.ts";
import type { RowSpec } from "./table.ts";
import {
  ARTIFACT_BYTES,
  CWD,
  type Job,
  type sizes,
  type Workload,
  writeBlobRefSession,
  writeBucket,
  writeImageSession,
  writeTextSession,
} from "./workloads.ts";

/** One child to spawn per run: the job, which implementation, and the key its result is filed under. */
export interface Spawn {
  key: string;
  impl: Impl;
  job: Omit<Job, "work">;
}

export function plan(only: Workload[], size: ReturnType<typeof sizes>, root: string): { spawns: Spawn[]; rows: RowSpec[] } {
  const mb = (path: string) => statSync(path).size / 1e6;
  const spawns: Spawn[] = [];
  const rows: RowSpec[] = [];
  const all = (key: string) => ({ raw: key, pi: key, omp: key, us: key, "raw-bun": key });
  const each = (key: string, job: Omit<Job, "work">) => {
    for (const impl of IMPLS) spawns.push({ key, impl, job });
  };
  for (const w of only) {
    if (w === "W1") {
      each("W1", { workload: "W1", count: size.w1Appends });
      rows.push({
        label: `W1 ${size.w1Appends.toLocaleString("en-US")} appends of ~9 KB messages, total`,
        unit: "ms",
        metric: "ms",
        jobs: all("W1"),
      });
    } else if (w === "W2") {
      each("W2", { workload: "W2", count: size.w2Entries });
      const label = "W2 image entry (300 KB base64 PNG) p50";
      rows.push({ label, unit: "µs", metric: "imageP50Us", jobs: all("W2") });
      rows.push({ label: "W2 text entry p50", unit: "µs", metric: "textP50Us", jobs: all("W2") });
    } else if (w === "W3") {
      const source = join(root, "w3-text.jsonl");
      writeTextSession(source, size.w3Bytes, 31);
      each("W3", { workload: "W3", count: 0, source });
      rows.push({ label: `W3 open ${mb(source).toFixed(0)} MB text`, unit: "ms", metric: "ms", jobs: all("W3") });
    } else if (w === "W4") {
      const source = join(root, "w4-images.jsonl");
      writeImageSession(source, size.w4Bytes, 41);
      for (const impl of IMPLS.filter((i) => i !== "us")) spawns.push({ key: "W4", impl, job: { workload: "W4", count: 0, source } });
      for (const mode of ["lazy", "eager"] as const)
        spawns.push({ key: `W4-${mode}`, impl: "us", job: { workload: "W4", count: 0, source, mode } });
      const label = `W4 open ${mb(source).toFixed(0)} MB inline images`;
      const one = { pi: "(one mode: row above)", omp: "(one mode: row above)" };
      rows.push({
        label: `${label}, ours lazy`,
        unit: "ms",
        metric: "ms",
        jobs: { raw: "W4", pi: "W4", "raw-bun": "W4", omp: "W4", us: "W4-lazy" },
      });
      rows.push({
        label: `${label}, ours eager`,
        unit: "ms",
        metric: "ms",
        jobs: { raw: "W4", "raw-bun": "W4", us: "W4-eager" },
        notes: one,
      });
      rows.push({
        label: "W4 peak RSS, ours lazy",
        unit: "MB",
        metric: "rssMB",
        jobs: { raw: "W4", pi: "W4", "raw-bun": "W4", omp: "W4", us: "W4-lazy" },
      });
      rows.push({
        label: "W4 peak RSS, ours eager",
        unit: "MB",
        metric: "rssMB",
        jobs: { raw: "W4", "raw-bun": "W4", us: "W4-eager" },
        notes: one,
      });
    } else if (w === "W4B") {
      const images = join(root, "w4b-images.jsonl");
      writeImageSession(images, size.w4Bytes, 41);
      const source = join(root, "w4b-refs.jsonl");
      const blobs = join(root, "w4b-blobs");
      writeBlobRefSession(images, source, blobs);
      each("W4B", { workload: "W4B", count: 0, source, blobs });
      const label = `W4b eager open of blob refs (the W4 session, ${mb(images).toFixed(0)} MB inline, externalized)`;
      rows.push({ label, unit: "ms", metric: "ms", jobs: all("W4B") });
    } else if (w === "W5") {
      const bucket = join(root, "w5", cwdBucket(CWD, "omp"));
      writeBucket(bucket, size.w5Sessions);
      each("W5", { workload: "W5", count: size.w5Sessions, source: bucket });
      rows.push({
        label: `W5 first listing, ${size.w5Sessions.toLocaleString("en-US")} sessions`,
        unit: "ms",
        metric: "ms",
        jobs: all("W5"),
      });
    } else if (w === "W6") {
      const source = join(root, "w6-source.jsonl");
      writeTextSession(source, size.w6Bytes, 61);
      each("W6", { workload: "W6", count: 0, source });
      each("W6-artifacts", { workload: "W6-artifacts", count: size.w6Files });
      const artifactsMB = ((size.w6Files * ARTIFACT_BYTES) / 1e6).toFixed(0);
      rows.push({
        label: `W6 fork a ${mb(source).toFixed(mb(source) < 10 ? 1 : 0)} MB session (file only)`,
        unit: "ms",
        metric: "ms",
        jobs: all("W6"),
      });
      const label = `W6 fork with a ${artifactsMB} MB / ${size.w6Files}-file artifacts dir`;
      rows.push({ label, unit: "ms", metric: "ms", jobs: all("W6-artifacts") });
    }
  }
  return { spawns, rows };
}
