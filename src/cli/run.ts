import { main } from "./main.ts";
import type { CliIo } from "./context.ts";

/** Runs the CLI against the real process streams. */
export async function runCli(argv: string[]): Promise<number> {
  // A closed pipe (`… | head`) ends the output quietly instead of crashing.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw err;
  });
  const io: CliIo = {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    stdin: process.stdin,
    isTTY: process.stderr.isTTY === true,
    env: process.env,
    cwd: process.cwd(),
  };
  return main(argv, io);
}
