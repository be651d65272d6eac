import { createReadStream, openSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Readable } from "node:stream";
import { TranscriptStoreError } from "../errors.ts";
import { isStoreUrl, storeFromUrl } from "../storage/store-url.ts";
import { storeUrlForms } from "../storage/backend-registry.ts";
import { detectLayout, resolveStoreDirs, type SessionLayout, type StoreDirs } from "../session/paths.ts";
import { displayWidth, truncateTo } from "./table-width.ts";
import { terminalSafe, terminalText } from "./terminal-text.ts";
import { missingTypedDir } from "./typed-paths.ts";
import { keySourceOf } from "./key-source.ts";
import type { StoreKey } from "../crypto/line-cipher.ts";

/**
 * Where the CLI reads and writes; tests pass their own. `main` wraps `stdout` and `stderr` with
 * the terminal writer (`terminalIo`, src/cli/terminal-text.ts) before any command sees them.
 */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  stdin: Readable;
  /** stdin is a terminal: a command that reads it (`import`) without a file refuses to wait on it. @default false */
  stdinIsTTY?: boolean;
  /** stderr is a terminal: progress bars instead of one line per file. */
  isTTY: boolean;
  /**
   * stdout is a terminal: machine output (`--json`, `export`) is made visible there too (the same
   * JSON values, control characters as `\u` escapes); elsewhere (a pipe, a file) it is exact. @default false
   */
  stdoutIsTTY?: boolean;
  /** stdout's width in columns when it is a terminal (tables fit it); absent elsewhere (nothing is cut). */
  columns?: number;
  /** stdout as bytes, for binary output (`bundle`): written as is, never through the terminal writer. @default absent */
  stdoutBytes?: import("node:stream").Writable;
  /** `stdout` with search's marked matches (« ») in colour: set by `terminalIo`; for a terminal only (search-output.ts). */
  stdoutMarked?: (text: string) => void;
  /** Machine output: set by `terminalIo` (exact unless stdout is a terminal); `stdout` when absent. */
  records?: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** Working directory for relative paths and default cwd. */
  cwd: string;
  /**
   * Aborted on SIGINT/SIGTERM (its reason: the signal's name): long commands stop between files
   * (`Progress.tick`), and `main` exits 130 (143 for SIGTERM). @default never aborted
   */
  signal?: AbortSignal;
}

/** A usage problem: one line to stderr and exit code 2. */
export class UsageError extends Error {}

/** The run was interrupted (Ctrl-C, SIGTERM) between files: `main` exits 128 + the signal's number. */
export class InterruptedError extends Error {
  constructor(readonly signal: "SIGINT" | "SIGTERM") {
    super(`interrupted (${signal})`);
  }
}

export type OptionSpec = Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean; default?: string | boolean }>;

export const GLOBAL_OPTIONS: OptionSpec = {
  root: { type: "string" },
  "sessions-dir": { type: "string" },
  "blobs-dir": { type: "string" },
  layout: { type: "string" },
  store: { type: "string" },
  "key-file": { type: "string" },
  json: { type: "boolean", default: false },
  ndjson: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
};

/** What every command receives once arguments are parsed. */
export interface CommandContext {
  io: CliIo;
  dirs: StoreDirs;
  /** Bucket naming: `--layout`, else what the sessions tree shows, else omp's. */
  layout: SessionLayout;
  root: string | undefined;
  /** A database store (`--store`, else $TRANSCRIPT_STORE_URL): every command works on it instead of the file tree. */
  store: string | undefined;
  /** How to connect to `store`: its PostgreSQL schema ($TRANSCRIPT_STORE_PG_SCHEMA) and, for a read-only command, no DDL. */
  storeConnect: { schema?: string; migrate?: "check" };
  json: boolean;
  /** The store key (`--key-file`, else `$TRANSCRIPT_STORE_KEY_FILE`), read on first use; null when none is given. */
  key: () => StoreKey | null;
  values: Record<string, string | boolean | Array<string | boolean> | undefined>;
  positionals: string[];
  /**
   * Writes one record: an NDJSON line with `--json`, else the text line. Build
   * a text that holds transcript or file-system text with `terminalText` (one value, one line).
   */
  emit: (record: unknown, text: string) => void;
  /** Flushes the record stream; `main` awaits it after the command. */
  close: () => Promise<void>;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  options: OptionSpec;
  minArgs?: number;
  maxArgs?: number;
  /** The command may create the store: a `--root` (etc.) that does not exist yet is fine. */
  createsStore?: boolean;
  /**
   * The command only reads (or, as a function, only reads with these options: `gc --dry-run`): a
   * database store is connected without DDL (its schema checked, never created or migrated).
   */
  readOnly?: boolean | ((values: CommandContext["values"]) => boolean);
  /** The command's own directory flags that must name an existing directory (as the store flags must). */
  mustExist?: readonly string[];
  /** The exit code of a failure of this command (a coded error, not a usage error): grep's 2 for `search`. @default 1 */
  errorExit?: number;
  run: (ctx: CommandContext) => Promise<number>;
}

/** Parses a command's arguments strictly: unknown flags and wrong arity are usage errors. */
export function buildContext(command: Command, argv: string[], io: CliIo): CommandContext {
  const parsed = parseOptions(command.name, argv, { ...GLOBAL_OPTIONS, ...command.options });
  const { values, positionals } = parsed;
  if (values.help)
    return {
      io,
      dirs: { sessionsDir: "", blobsDir: "" },
      layout: "omp",
      root: undefined,
      store: undefined,
      storeConnect: {},
      json: false,
      key: () => null,
      values,
      positionals,
      emit: () => {},
      close: async () => {},
    };
  if (command.minArgs !== undefined && positionals.length < command.minArgs)
    throw new UsageError(`${command.name}: missing argument (usage: transcript-store ${command.usage})`);
  if (command.maxArgs !== undefined && positionals.length > command.maxArgs)
    throw new UsageError(`${command.name}: too many arguments (usage: transcript-store ${command.usage})`);
  const root = (values.root as string | undefined) ?? io.env.TRANSCRIPT_STORE_HOME;
  let dirs: StoreDirs;
  try {
    dirs = resolveStoreDirs({
      root,
      sessionsDir: (values["sessions-dir"] as string | undefined) ?? (io.env.TRANSCRIPT_STORE_SESSIONS_DIR || undefined),
      blobsDir: values["blobs-dir"] as string | undefined,
    });
  } catch (err) {
    if (err instanceof TranscriptStoreError) throw new UsageError(err.message);
    throw err;
  }
  const given = values.layout as string | undefined;
  if (given !== undefined && given !== "omp" && given !== "pi")
    throw new UsageError(`--layout must be "omp" or "pi", got ${JSON.stringify(given)}`);
  const layout: SessionLayout = given ?? detectLayout(dirs.sessionsDir) ?? "omp";
  const store = (values.store as string | undefined) ?? (io.env.TRANSCRIPT_STORE_URL || undefined);
  if (store !== undefined && !isStoreUrl(store)) throw new UsageError(`--store (or TRANSCRIPT_STORE_URL) must be a ${storeUrlForms()} URL`);
  const missing = missingTypedDir(values, io.cwd, { ...command, database: store !== undefined });
  if (missing !== null) throw new UsageError(`${command.name}: ${missing}`);
  const json = values.json === true || values.ndjson === true;
  const records = json ? recordStream(io) : null;
  const readOnly = typeof command.readOnly === "function" ? command.readOnly(values) : command.readOnly === true;
  let key: StoreKey | null | undefined;
  return {
    io,
    dirs,
    layout,
    root,
    store,
    storeConnect: {
      ...(io.env.TRANSCRIPT_STORE_PG_SCHEMA ? { schema: io.env.TRANSCRIPT_STORE_PG_SCHEMA } : {}),
      ...(readOnly ? { migrate: "check" as const } : {}),
    },
    json,
    key: () => (key ??= keySourceOf(values["key-file"], io.env, io.cwd, io.stderr)),
    values,
    positionals,
    emit: (record, text) => (records ? records.write(record) : io.stdout(`${text}\n`)),
    close: () => records?.close() ?? Promise.resolve(),
  };
}

/**
 * `util.parseArgs`, strict, with our own one-line messages (Node's name the API, not the command):
 * an unknown option with the closest known one ("did you mean"), a missing value, a value given
 * to a flag. Each is a `UsageError` (exit 2).
 */
export function parseOptions(commandName: string | undefined, argv: string[], options: OptionSpec) {
  const who = commandName === undefined ? "" : `${commandName}: `;
  const { tokens } = parseArgs({ args: argv, options, allowPositionals: true, strict: false, tokens: true });
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    const spec = options[token.name];
    if (spec === undefined) {
      const known = Object.keys(options).map((name) => `--${name}`);
      const guess = token.rawName.startsWith("--") ? didYouMean(token.rawName, known) : undefined;
      const hint = guess ? `did you mean ${guess}?` : `try transcript-store ${commandName ? `${commandName} ` : ""}--help`;
      throw new UsageError(terminalText`${who}unknown option ${token.rawName} (${hint})`);
    }
    if (spec.type === "boolean" && token.value !== undefined) throw new UsageError(`${who}--${token.name} takes no value`);
    if (spec.type === "string" && token.value === undefined)
      throw new UsageError(`${who}--${token.name} needs a value (--${token.name} <value>)`);
  }
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    // What the scan above lets through (a value that looks like an option: `--root --json`).
    const message = (err as Error).message.split("\n")[0]!.replace(/\. To specify .*$/, "");
    throw new UsageError(terminalText`${who}${message}`);
  }
}

/** The known name closest to a mistyped one, when it is close enough to be what was meant. */
export function didYouMean(typed: string, known: string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(typed, name);
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  const bare = typed.replace(/^-+/, "");
  return best && best.distance <= Math.max(1, Math.min(2, Math.floor(bare.length / 3))) ? best.name : undefined;
}

/** Levenshtein distance. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/**
 * The input of a command that reads data (`import [file|-]`): the file named, else stdin. With no
 * file and stdin a terminal it refuses (a `UsageError`) rather than wait silently for typing;
 * `-` reads the terminal all the same.
 */
export function commandInput(ctx: CommandContext, file: string | undefined): Readable {
  if (file !== undefined && file !== "-") {
    let fd: number;
    try {
      fd = openSync(resolve(ctx.io.cwd, file), "r");
    } catch (err) {
      throw new UsageError(terminalText`import: cannot read ${file}: ${(err as Error).message}`);
    }
    return createReadStream("", { fd });
  }
  if (file === undefined && ctx.io.stdinIsTTY)
    throw new UsageError("import: no input: pipe NDJSON in (… | transcript-store import), or name a file (import <file>, - for stdin)");
  return ctx.io.stdin;
}

/**
 * The record stream into the CLI's stdout: one JSON line per record, written at once (no stream
 * library at start-up: issue 34). Records are plain data (no cycles, no BigInt).
 */
function recordStream(io: CliIo): { write: (record: unknown) => void; close: () => Promise<void> } {
  const write = io.records ?? io.stdout;
  return {
    write: (record) => write(`${JSON.stringify(record)}\n`),
    close: async () => {},
  };
}

/** Prints a library warning to stderr as one line: `warning: <message> (<path>)`. */
export function printWarning(io: CliIo): (warning: { message: string; path?: string }) => void {
  return (w) => io.stderr(w.path ? terminalText`warning: ${w.message} (${w.path})\n` : terminalText`warning: ${w.message}\n`);
}

/** Human byte sizes. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n;
  let i = -1;
  do {
    v /= 1024;
    i++;
  } while (v >= 1024 && i < units.length - 1);
  return `${v.toFixed(v >= 100 ? 0 : 1)} ${units[i]}`;
}

/** Columns a table may narrow to fit a width, the first listed first, and which end of a cut cell stays. */
export interface TableFit {
  width: number;
  /** `min`: the narrowest the column gets (its heading is cut too). */
  shrink: ReadonlyArray<{ column: number; keep: "start" | "end"; min: number }>;
}

/**
 * A plain text table; each cell is one line with its controls made visible (`terminalSafe`). With
 * `fit` (a terminal's width), the shrinkable columns are narrowed, each down to its `min`, until a
 * row fits (a terminal narrower than the sum of the minimums wraps); a cut cell shows `…` (whole
 * characters only).
 */
export function formatTable(heading: string[], cells: string[][], fit?: TableFit): string {
  let head = heading;
  let rows = cells.map((row) => row.map(terminalSafe));
  const widths = head.map((h, i) => Math.max(displayWidth(h), ...rows.map((r) => displayWidth(r[i] ?? ""))));
  if (fit !== undefined) {
    let over = widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1) - fit.width;
    for (const { column, min } of fit.shrink) {
      if (over <= 0) break;
      const floor = Math.min(widths[column]!, min);
      const cut = Math.min(over, widths[column]! - floor);
      widths[column]! -= cut;
      over -= cut;
    }
    const cut = (r: string[]) => r.map((c, i) => truncateTo(c, widths[i]!, fit.shrink.find((s) => s.column === i)?.keep ?? "start"));
    rows = rows.map(cut);
    head = cut(head);
  }
  const pad = (c: string, w: number) => c + " ".repeat(Math.max(0, w - displayWidth(c)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : pad(c, widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

/**
 * The SessionManager options naming the CLI's store: the database, or the file tree's directories,
 * and the store key when one is given (`--key-file`): encrypted sessions open, new ones are encrypted.
 */
export function storeOptions(ctx: CommandContext) {
  const store = ctx.store === undefined ? undefined : storeFromUrl(ctx.store, ctx.storeConnect);
  const key = ctx.key();
  // `root` places the store's own state (lifecycle log, trash) when the sessions tree is elsewhere.
  return {
    root: ctx.root,
    sessionsDir: ctx.dirs.sessionsDir,
    blobsDir: ctx.dirs.blobsDir,
    layout: ctx.layout,
    store,
    ...(key === null ? {} : { encryption: { key: key.key } }),
  };
}

/** `rehydrate: "lazy"` where it can be had: not with a store key (lazy images are refs into encrypted lines). */
export function lazyImages(ctx: CommandContext): { rehydrate?: "lazy" } {
  return ctx.key() === null ? { rehydrate: "lazy" } : {};
}
