// Runs the CLI in a child process: `cli-child.ts <args…>` (for kill and memory tests).
import { runCli } from "../../../src/cli/run.ts";

process.exitCode = await runCli(process.argv.slice(2));
