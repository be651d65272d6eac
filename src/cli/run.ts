import type { CliIo } from "./context.ts";
import { terminalIo, terminalText } from "./terminal-text.ts";
import { askedForVersion, packageVersion } from "./version.ts";

/** The progress bars' module, once a command loaded it (the CLI's modules load only past `--version`). */
let progress: typeof import("./progress.ts") | null = null;
const stopProgressBars = () => progress?.stopProgressBars();
const stoppingBetweenFiles = () => progress?.stoppingBetweenFiles() ?? false;

/** Exit codes of a run ended by a signal: 128 + the signal's number, as a shell reports it. */
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

/** Runs the CLI against the real process streams. */
export async function runCli(argv: string[]): Promise<number> {
  // A closed pipe (`… | head`): the reader is gone, so the rest of the output is dropped quietly;
  // the command runs to its end and exits with its own code (a failing command stays failing).
  let stdoutClosed = false;
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") stdoutClosed = true;
    else throw err;
  });
  // Ctrl-C (SIGINT) or SIGTERM during a loop over files asks the command to stop between files (it
  // finishes the file in hand, restores the terminal and exits 130/143). Elsewhere, or on a second
  // one, the run ends at once, the terminal restored first: a file in hand is left as it was
  // (writes go to a temp file renamed into place), a database transaction is rolled back.
  // A closed stderr (`2>&1 | head`) likewise: nothing left to tell, the exit code stays the command's.
  process.stderr.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
  });
  const interrupt = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, () => {
      if (!interrupt.signal.aborted && stoppingBetweenFiles()) return interrupt.abort(signal);
      stopProgressBars();
      io.stderr(`transcript-store: interrupted (${signal})\n`);
      process.exit(SIGNAL_EXIT[signal]);
    });
  const io: CliIo = {
    stdout: (text) => void (stdoutClosed || process.stdout.write(text)),
    stderr: (text) => process.stderr.write(text),
    stdoutBytes: process.stdout,
    stdin: process.stdin,
    stdinIsTTY: process.stdin.isTTY === true,
    isTTY: process.stderr.isTTY === true,
    stdoutIsTTY: process.stdout.isTTY === true,
    columns: process.stdout.isTTY === true && process.stdout.columns > 0 ? process.stdout.columns : undefined,
    env: process.env,
    cwd: process.cwd(),
    signal: interrupt.signal,
  };
  // An error no command caught (thrown in a callback or a timer) is reported through the writer
  // too: Node's own report would print its message (a path, a line) raw. Exit code 1, as Node's.
  process.on("uncaughtException", (err: Error) => {
    stopProgressBars();
    const safe = terminalIo(io);
    safe.stderr(terminalText`transcript-store: ${err?.message ?? String(err)}\n`);
    if (io.env.TRANSCRIPT_STORE_DEBUG) safe.stderr(`${err?.stack}\n`);
    process.exit(1);
  });
  // `--version` answers before any command module loads (fresh-process start-up, issue 34)
  if (askedForVersion(argv)) {
    terminalIo(io).stdout(`transcript-store ${packageVersion()}\n`);
    return 0;
  }
  progress = await import("./progress.ts");
  const { main } = await import("./main.ts");
  return main(argv, io);
}
