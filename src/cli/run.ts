import { main, type CliIo } from "./main.ts";

/** Runs the CLI against the real process streams. */
export async function runCli(argv: string[]): Promise<number> {
  const io: CliIo = {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    stdin: process.stdin,
    isTTY: process.stderr.isTTY === true,
    env: process.env,
  };
  return main(argv, io);
}
