import { main } from "./main.ts";
import type { CliIo } from "./context.ts";
import { terminalIo, terminalText } from "./terminal-text.ts";

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
    stdoutIsTTY: process.stdout.isTTY === true,
    columns: process.stdout.isTTY === true && process.stdout.columns > 0 ? process.stdout.columns : undefined,
    env: process.env,
    cwd: process.cwd(),
  };
  // An error no command caught (thrown in a callback or a timer) is reported through the writer
  // too: Node's own report would print its message (a path, a line) raw. Exit code 1, as Node's.
  process.on("uncaughtException", (err: Error) => {
    const safe = terminalIo(io);
    safe.stderr(terminalText`transcript-store: ${err?.message ?? String(err)}\n`);
    if (io.env.TRANSCRIPT_STORE_DEBUG) safe.stderr(`${err?.stack}\n`);
    process.exit(1);
  });
  return main(argv, io);
}
