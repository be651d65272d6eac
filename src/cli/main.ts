import { TranscriptStoreError } from "../errors.ts";
import { closeUrlStores } from "../storage/store-url.ts";
import { buildContext, InterruptedError, UsageError, type CliIo, type Command } from "./context.ts";
import { demoCommand } from "./commands/demo.ts";
import { gcCommand } from "./commands/gc.ts";
import { inlineImagesCommand } from "./commands/inline-images.ts";
import { migrateCommand } from "./commands/migrate.ts";
import { forkCommand, lsCommand, mvCommand, showCommand } from "./commands/sessions.ts";
import { statsCommand } from "./commands/stats.ts";
import { exportCommand, importCommand } from "./commands/transfer.ts";
import { verifyCommand } from "./commands/verify.ts";
import { stopProgressBars } from "./progress.ts";
import { terminalIo, terminalText } from "./terminal-text.ts";

export type { CliIo };

const COMMANDS: Command[] = [
  migrateCommand,
  verifyCommand,
  gcCommand,
  lsCommand,
  showCommand,
  exportCommand,
  importCommand,
  inlineImagesCommand,
  forkCommand,
  mvCommand,
  statsCommand,
  demoCommand,
];

/** The one help text. */
export const HELP = `transcript-store — keep coding-agent sessions small, safe and movable

Usage: transcript-store <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.usage.padEnd(58)} ${c.summary}`).join("\n")}

Global options:
  --root <dir>          store root (default $TRANSCRIPT_STORE_HOME or ~/.transcript-store)
  --sessions-dir <dir>  sessions directory (default <root>/sessions), e.g. ~/.pi/agent/sessions
  --blobs-dir <dir>     blob directory (default <root>/blobs)
  --layout omp|pi       cwd bucket names: omp's -<home-relative> or pi's --<absolute path>--
                        (default: what the sessions tree shows, else omp)
  --store <url>         a PostgreSQL store (postgres://…; default $TRANSCRIPT_STORE_URL):
                        every command works on it instead of the file tree
  --json, --ndjson      machine output on stdout (one JSON object per line)
  -h, --help            this help

Exit codes: 0 ok, 1 problems found or an operation failed, 2 usage error,
  130 interrupted (Ctrl-C; 143 on SIGTERM).
`;

/**
 * Runs one CLI invocation and returns its exit code (0 ok, 1 problems/failure, 2 usage). All
 * output goes through the terminal writer (`terminalIo`): no control character reaches the
 * terminal raw, whatever a transcript holds.
 */
export async function main(argv: string[], streams: CliIo): Promise<number> {
  const io = terminalIo(streams);
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.stderr(HELP);
    return 2;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    io.stdout(HELP);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) {
    io.stderr(terminalText`transcript-store: unknown command ${JSON.stringify(name)} (try --help)\n`);
    return 2;
  }
  try {
    const ctx = buildContext(command, rest, io);
    if (ctx.values.help) {
      io.stdout(`Usage: transcript-store ${command.usage}\n\n${command.summary}\n`);
      return 0;
    }
    try {
      return await command.run(ctx);
    } finally {
      stopProgressBars(); // the terminal is restored (cursor shown, line wrap on) however the command ended
      await ctx.close();
      await closeUrlStores(); // a database store's connections would keep the process alive
    }
  } catch (err) {
    if (err instanceof InterruptedError) {
      io.stderr(`transcript-store: ${err.message}: stopped between files, the files done so far are kept\n`);
      return err.signal === "SIGTERM" ? 143 : 130;
    }
    if (err instanceof UsageError) {
      io.stderr(terminalText`transcript-store: ${err.message}\n`);
      return 2;
    }
    if (err instanceof TranscriptStoreError) {
      io.stderr(terminalText`transcript-store: ${err.code}: ${err.message}\n`);
      return 1;
    }
    io.stderr(terminalText`transcript-store: ${(err as Error)?.message ?? String(err)}\n`);
    if (io.env.TRANSCRIPT_STORE_DEBUG) io.stderr(`${(err as Error)?.stack}\n`);
    return 1;
  }
}
