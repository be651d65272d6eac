// Runs one peer child (Node + tsx, or Bun for omp and raw Bun) on one Job and returns its Result.
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { BUN } from "./paths.ts";
import type { Job, Result } from "./workloads.ts";

export const IMPLS = ["raw", "us", "pi", "raw-bun", "omp"] as const;
export type Impl = (typeof IMPLS)[number];

/** Each column's baseline: the raw child on the same runtime (omp runs on Bun only, so it divides by raw Bun). */
export const BASELINE: Record<Impl, Impl | null> = { raw: null, us: "raw", pi: "raw", "raw-bun": null, omp: "raw-bun" };

const ROOT = join(import.meta.dirname, "../..");
const TIMEOUT_MS = 15 * 60_000;

function command(impl: Impl, job: Job): [string, string[]] {
  const script = join(import.meta.dirname, `${impl === "raw-bun" ? "raw" : impl}-child.ts`);
  if (impl === "omp" || impl === "raw-bun") return [BUN, [script, JSON.stringify(job)]];
  return [process.execPath, ["--import", "tsx", script, JSON.stringify(job)]];
}

/** The child's Result, or `{ failed }` with the last stderr line when it exits non-zero or times out. */
export function runPeer(impl: Impl, job: Job): Promise<Result & { failed?: string }> {
  // A home of its own: pi and omp write agent state (blobs, indexes) under ~ and $PI_CODING_AGENT_DIR.
  const home = join(job.work, "home");
  mkdirSync(home, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, "agent") };
  for (const kind of ["DATA", "STATE", "CACHE", "CONFIG"]) env[`XDG_${kind}_HOME`] = join(home, kind.toLowerCase());
  const [bin, args] = command(impl, job);
  return new Promise((resolve) => {
    const child = spawn(bin, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS);
    child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (err += d));
    child.on("error", (e) => resolve({ failed: e.message }));
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const last = out.trim().split("\n").at(-1);
      if (code === 0 && last) return resolve(JSON.parse(last) as Result);
      const lines = err.trim().split("\n");
      const why = lines.find((l) => /^\s*[A-Za-z]*Error: /.test(l))?.trim() ?? lines.at(-1) ?? "";
      resolve({ failed: `${signal ?? `exit ${code}`}: ${why.slice(0, 160)}` });
    });
  });
}
