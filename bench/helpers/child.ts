import { spawn } from "node:child_process";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "../..");

/** Runs a bench helper script in a fresh Node process and returns its last stdout line as JSON. */
export function runChild(script: string, args: string[], nodeArgs: string[] = []): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", join(ROOT, "bench/helpers", script), ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const last = out.trim().split("\n").at(-1);
      if (code !== 0 || !last) return reject(new Error(`${script} exited ${code}: ${err.slice(-500)}`));
      resolve(JSON.parse(last));
    });
  });
}
