import { candidateLine, SessionAmbiguousError, TranscriptStoreError } from "../errors.ts";
import { closeUrlStores } from "../storage/store-url.ts";
import { registeredBackends } from "../storage/backend-registry.ts";
import {
  buildContext,
  didYouMean,
  GLOBAL_OPTIONS,
  InterruptedError,
  parseOptions,
  UsageError,
  type CliIo,
  type Command,
} from "./context.ts";
import { COMMAND_TABLE } from "./command-table.ts";
import { flagLines } from "./flag-help.ts";
import { stopProgressBars } from "./progress.ts";
import { terminalIo, terminalText } from "./terminal-text.ts";
import { askedForVersion, packageVersion } from "./version.ts";

export type { CliIo };

/** Every command, loaded (for tests and tools that inspect them all; the CLI loads only the one that runs). */
export async function loadCommands(): Promise<Command[]> {
  return Promise.all(COMMAND_TABLE.map((c) => c.load()));
}

/** Wraps `text` to `width` columns, each line after the first indented by `indent` spaces. */
function wrap(text: string, width: number, indent: number, first = 0): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    const room = width - (lines.length === 0 ? first : indent);
    if (line !== "" && line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join(`\n${" ".repeat(indent)}`);
}

/** `--store`'s help, from the registered backends (storage/backend-registry.ts). */
const storeHelp = () =>
  "a store instead of the file tree (default $TRANSCRIPT_STORE_URL): every command works on it; " +
  registeredBackends()
    .map((b) => `${b.schemes[0]}://… ${b.description}`)
    .join("; ");

/**
 * The one help text: every line fits 80 columns. The built-in backends are registered first (their
 * lines in `--store`'s help); no command module is loaded.
 */
export async function helpText(): Promise<string> {
  await import("../storage/builtin-backends.ts");
  return `transcript-store — keep coding-agent sessions small, safe and movable

Usage: transcript-store [global options] <command> [options]
       transcript-store <command> --help    (a command's arguments)

Commands:
${COMMAND_TABLE.map((c) => `  ${c.name.padEnd(15)} ${wrap(c.summary, 80, 18, 18)}`).join("\n")}

Global options (before or after the command):
  --root <dir>          store root (default $TRANSCRIPT_STORE_HOME or
                        ~/.transcript-store)
  --sessions-dir <dir>  sessions directory (default
                        $TRANSCRIPT_STORE_SESSIONS_DIR or <root>/sessions),
                        e.g. ~/.pi/agent/sessions
  --blobs-dir <dir>     blob directory (default <root>/blobs)
  --layout omp|pi       cwd bucket names: omp's -<home-relative> or pi's
                        --<absolute path>-- (default: what the sessions tree
                        shows, else omp)
  --store <url>         ${wrap(storeHelp(), 80, 24, 24)}
  --key-file <file>     the store key (32 bytes or 64 hex characters; default
                        the file $TRANSCRIPT_STORE_KEY_FILE names): encrypted
                        sessions open, new ones are encrypted. Never a key on
                        the command line
  --json, --ndjson      machine output on stdout (one JSON object per line);
                        an error is a last line {"type":"error","code",…}
  -h, --help            this help
  -V, --version         the version

Privacy (docs/privacy.md): export TRANSCRIPT_STORE_KEY_FILE=<32-byte key file>;
  redact; encrypt (every session, and new ones); work; rekey <id> --new-key-file
  <file>; bundle <id> --compress -o <file>; decrypt to undo.

Exit codes: 0 ok, 1 problems found or an operation failed, 2 usage error,
  130 interrupted (Ctrl-C; 143 on SIGTERM); search as grep: 0 hits, 1 none,
  2 an error.
`;
}

/** A command's own help: its usage, summary and each of its flags with what it does, wrapped to 80 columns. */
export function commandHelp(command: Command): string {
  const usage = `Usage: transcript-store ${wrap(command.usage, 80, 6, 24)}`;
  const flags = flagLines(command, (text, indent, first) => wrap(text, 80, indent, first));
  return `${usage}\n\n${wrap(command.summary, 80, 0)}\n\n${flags === "" ? "" : `${flags}\n`}Global options: see transcript-store --help\n`;
}

/** Global options that take a value: before the command name, their value goes with them. */
const GLOBAL_VALUED = new Set(
  Object.entries(GLOBAL_OPTIONS)
    .filter(([, spec]) => spec.type === "string")
    .map(([name]) => `--${name}`),
);

/**
 * Splits `argv` into the command name and its arguments; global options given before the name
 * (`--root x ls`) go to the command's arguments too.
 */
function splitCommand(argv: string[]): { name: string | undefined; args: string[]; leading: string[] } {
  const leading: string[] = [];
  let i = 0;
  while (i < argv.length && argv[i]!.startsWith("-") && argv[i] !== "--") {
    const arg = argv[i]!;
    leading.push(arg);
    if (GLOBAL_VALUED.has(arg) && i + 1 < argv.length) leading.push(argv[++i]!);
    i++;
  }
  return { name: argv[i], args: [...leading, ...argv.slice(i + 1)], leading };
}

/** An ambiguous prefix: its first line, then one line per candidate (id, time, title), as git lists a short SHA's. */
function ambiguousText(err: SessionAmbiguousError): string {
  const head = err.message.split("\n")[0]!;
  const lines = err.candidates.map((c) => terminalText`  ${candidateLine(c)}\n`);
  return terminalText`transcript-store: ${err.code}: ${head}\n` + lines.join("");
}

/** The code an error is reported with (`--json`: the `code` of the error record). */
function errorCode(err: unknown): string {
  if (err instanceof InterruptedError) return "INTERRUPTED";
  if (err instanceof UsageError) return "USAGE";
  if (err instanceof TranscriptStoreError) return err.code;
  return "UNEXPECTED";
}

/**
 * Runs one CLI invocation and returns its exit code (0 ok, 1 problems/failure, 2 usage, 130
 * interrupted). All output goes through the terminal writer (`terminalIo`): no control character
 * reaches the terminal raw, whatever a transcript holds. With `--json` a failure is also one JSON
 * line on stdout, after the records: `{"type":"error","code","exitCode","message"}`.
 */
export async function main(argv: string[], streams: CliIo): Promise<number> {
  const io = terminalIo(streams);
  const end = argv.indexOf("--");
  const json = (end === -1 ? argv : argv.slice(0, end)).some((a) => a === "--json" || a === "--ndjson");
  const fail = (err: unknown, exitCode: number, text: string): number => {
    io.stderr(text);
    if (json) {
      const record = {
        type: "error",
        code: errorCode(err),
        exitCode,
        message: (err as Error)?.message ?? String(err),
        ...(err instanceof SessionAmbiguousError ? { candidates: err.candidates } : {}),
      };
      (io.records ?? io.stdout)(`${JSON.stringify(record)}\n`);
    }
    return exitCode;
  };
  const { name, args, leading } = splitCommand(argv);
  // `--version` anywhere before `--` (before, after or instead of the command), as the other global flags.
  if (askedForVersion(argv)) {
    io.stdout(`transcript-store ${packageVersion()}\n`);
    return 0;
  }
  if (name === undefined || name === "help") {
    if (leading.includes("--help") || leading.includes("-h") || name === "help") {
      io.stdout(await helpText());
      return 0;
    }
    if (leading.length === 0) {
      io.stderr(await helpText());
      return 2;
    }
  }
  let command: Command | undefined;
  try {
    command = await COMMAND_TABLE.find((c) => c.name === name)?.load();
    // Before the name only global options: a mistyped one is named as such, not taken for the command.
    parseOptions(undefined, leading, { ...GLOBAL_OPTIONS, version: { type: "boolean", short: "V" } });
    if (command === undefined) {
      if (name === undefined) throw new UsageError("missing command (try --help)");
      const guess = didYouMean(
        name,
        COMMAND_TABLE.map((c) => c.name),
      );
      throw new UsageError(terminalText`unknown command ${JSON.stringify(name)} (${guess ? `did you mean "${guess}"?` : "try --help"})`);
    }
    const ctx = buildContext(command, args, io);
    if (ctx.values.help) {
      io.stdout(commandHelp(command));
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
    if (err instanceof InterruptedError)
      return fail(
        err,
        err.signal === "SIGTERM" ? 143 : 130,
        `transcript-store: ${err.message}: stopped between files, the files done so far are kept\n`,
      );
    if (err instanceof UsageError) return fail(err, 2, terminalText`transcript-store: ${err.message}\n`);
    const exit = command?.errorExit ?? 1;
    if (err instanceof SessionAmbiguousError) return fail(err, exit, ambiguousText(err));
    if (err instanceof TranscriptStoreError) return fail(err, exit, terminalText`transcript-store: ${err.code}: ${err.message}\n`);
    const code = fail(err, exit, terminalText`transcript-store: ${(err as Error)?.message ?? String(err)}\n`);
    if (io.env.TRANSCRIPT_STORE_DEBUG) io.stderr(`${(err as Error)?.stack}\n`);
    return code;
  }
}
