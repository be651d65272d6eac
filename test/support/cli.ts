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
