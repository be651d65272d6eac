import { spawn } from "node:child_process";
import { join } from "node:path";
import { Readable } from "node:stream";
import { main } from "../../src/cli/main.ts";

/** Runs the CLI in process and captures its output. */
export async function cli(
  argv: string[],
  options: { cwd?: string; stdin?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number; stdout: string; stderr: string; records: Array<Record<string, any>> }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    stdin: Readable.from([options.stdin ?? ""]),
    isTTY: false,
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
  });
  const records =
    argv.includes("--json") || argv.includes("--ndjson")
      ? stdout
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
  return { code, stdout, stderr, records };
}

const BIN = join(import.meta.dirname, "../../bin/transcript-store.mjs");

/**
 * Runs the CLI as a real child process (`bin/transcript-store.mjs`) and returns the exact bytes it
 * wrote: what a terminal would receive. `TRANSCRIPT_STORE_URL` is cleared unless given.
 */
export function cliProcess(
  argv: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; stdout: Buffer; stderr: Buffer }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...argv], {
      cwd: options.cwd ?? process.cwd(),
      env: { ...process.env, TRANSCRIPT_STORE_URL: "", ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err) }));
  });
}
