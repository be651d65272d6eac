import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";

export const REPO_ROOT = join(import.meta.dirname, "../..");

/** Spawns a TypeScript script in a real Node child process (through tsx). */
export function spawnTs(script: string, args: string[], nodeArgs: string[] = []): ChildProcess {
  return spawn(process.execPath, [...nodeArgs, "--import", "tsx", script, ...args], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
}

/** Runs a script to completion and returns its exit code and output. */
export function runTs(
  script: string,
  args: string[],
  nodeArgs: string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnTs(script, args, nodeArgs);
    let stdout = "";
    let stderr = "";
    // decode as a stream: a multi-byte character may straddle two pipe reads
    child.stdout!.setEncoding("utf8");
    child.stderr!.setEncoding("utf8");
    child.stdout!.on("data", (d) => (stdout += d));
    child.stderr!.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Calls `onLine` for each stdout line of a child. */
export function onLines(child: ChildProcess, onLine: (line: string) => void): void {
  let buffer = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (d: string) => {
    buffer += d;
    for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
      onLine(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
  });
}

export { prng } from "../../fixtures/seeded.ts";
