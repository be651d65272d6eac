import type { Readable } from "node:stream";
import { runDemo } from "./demo.ts";

/** Where the CLI reads and writes; tests pass their own. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  stdin: Readable;
  isTTY: boolean;
  env: NodeJS.ProcessEnv;
}

const HELP = `transcript-store <command> [options]

Commands:
  demo        migrate the bundled legacy fixtures in a temporary store and print a before/after table
`;

/** The CLI: returns the exit code (0 ok, 1 problems, 2 usage). */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    io.stdout(HELP);
    return command === undefined ? 2 : 0;
  }
  if (command === "demo") return runDemo(rest, io);
  io.stderr(`transcript-store: unknown command ${JSON.stringify(command)} (see --help)\n`);
  return 2;
}
