// Runs the CLI in a child process while an error no command catches is thrown from a callback:
// `cli-uncaught.ts <message> <args…>`.
import { runCli } from "../../../src/cli/run.ts";

const [message, ...argv] = process.argv.slice(2);
setImmediate(() => {
  throw new Error(message);
});
process.exitCode = await runCli(argv);
