import { dirname, resolve } from "node:path";
import { TranscriptStoreError, type StoreWarning } from "../../errors.ts";
import { agentFilePath } from "../../interchange/agent-paths.ts";
import { ensureDir } from "../../io.ts";
import { exportForeign, foreignLineBytes, type ForeignExportSummary } from "../../interchange/export-foreign.ts";
import type { InterchangeFormat } from "../../interchange/foreign-entry.ts";
import { defaultForeignTree, foreignFiles } from "../../interchange/foreign-files.ts";
import { followForeign, refused } from "../../interchange/follow-foreign.ts";
import { importForeignFile, type ForeignImportReport } from "../../interchange/import-foreign.ts";
import { writeNewOutput } from "../output-file.ts";
import { printWarning, storeOptions, UsageError, type CommandContext } from "../context.ts";
import { terminalText } from "../terminal-text.ts";

/** The formats `import --from` reads (and `export --to` writes back). */
export const FOREIGN_FORMATS: readonly InterchangeFormat[] = ["claude-code", "codex"];

/** Problems printed per file before "… and N more". */
const PROBLEMS_SHOWN = 5;

function formatOf(value: string): InterchangeFormat {
  if ((FOREIGN_FORMATS as readonly string[]).includes(value)) return value as InterchangeFormat;
  throw new UsageError(terminalText`import: --from must be one of ${FOREIGN_FORMATS.join(", ")}, got ${value}`);
}

function reportText(r: ForeignImportReport): string {
  const c = r.counts;
  const status = r.status === "created" ? "imported" : r.status;
  const where = r.location ?? r.path;
  const sidecars = r.artifacts > 0 ? `, ${r.artifacts} tool-results file(s) as artifacts` : "";
  const counts = `${c.records} line(s): ${c.mapped} mapped, ${c.kept} kept whole, ${c.damaged} damaged${sidecars}`;
  return terminalText`${status} ${r.id} from ${r.path}: ${counts}\n${where}`;
}

/**
 * `import --from claude-code|codex [paths…]`: each file (directories walked for `*.jsonl`; no path:
 * the agent's default tree) is imported, or only read with `--dry-run`; one report per file. A
 * file refused (not of that format, or a conflicting session) is reported and the others go on: exit 1.
 */
export async function runForeignImport(ctx: CommandContext, from: string): Promise<number> {
  const format = formatOf(from);
  const paths = ctx.positionals.length > 0 ? ctx.positionals : [defaultForeignTree(format, ctx.io.env)];
  const files = foreignFiles(paths, ctx.io.cwd);
  if (files.length === 0) throw new TranscriptStoreError("NO_INPUT", terminalText`no *.jsonl file under ${paths.join(", ")}`);
  const options = { ...storeOptions(ctx), dryRun: ctx.values["dry-run"] === true, onWarning: printWarning(ctx.io) };
  let failed = 0;
  const print = (report: ForeignImportReport) => {
    if (report.status === "refused") failed++;
    ctx.emit({ type: "foreign_import", ...report }, report.error ? terminalText`refused: ${report.error.message}` : reportText(report));
    if (!ctx.json && report.status !== "refused") {
      for (const p of report.problems.slice(0, PROBLEMS_SHOWN)) ctx.io.stderr(terminalText`  line ${p.line}: ${p.code}: ${p.reason}\n`);
      if (report.problems.length > PROBLEMS_SHOWN) ctx.io.stderr(`  … and ${report.problems.length - PROBLEMS_SHOWN} more problem(s)\n`);
    }
  };
  if (ctx.values.follow === true) {
    if (options.dryRun) throw new UsageError("import: --follow writes; it does not go with --dry-run");
    // until Ctrl-C / SIGTERM: each file imported when it changes; a refusal is reported and the follow goes on
    await followForeign(format, paths, {
      ...options,
      cwd: ctx.io.cwd,
      signal: ctx.io.signal ?? new AbortController().signal,
      onReport: print,
    });
    return 0;
  }
  for (const file of files) {
    let report: ForeignImportReport;
    try {
      report = await importForeignFile(format, file, options);
    } catch (err) {
      if (!(err instanceof TranscriptStoreError)) throw err;
      report = refused(format, file, err);
    }
    print(report);
  }
  return failed > 0 ? 1 : 0;
}

/** `EXTENSION_KEPT` warnings printed one by one before a count. */
const KEPT_SHOWN = 5;

/**
 * `export <id> --to claude-code|codex [--branch <entry>] [--no-redact]`: secrets redacted unless
 * --no-redact (rule counts on stderr); a session imported from that agent as
 * the agent wrote it (records as compact JSON, damaged lines byte for byte; with `--branch`, the
 * lines of that entry's path), any other session converted (its path to `--branch`, default the
 * leaf), to stdout or to `-o <file>` (a new file: `OUTPUT_EXISTS` when the name is taken). What the
 * target cannot express is kept in its extension: the first few such entries are named, then a count.
 */
export function foreignExport(format: InterchangeFormat) {
  return async (ctx: CommandContext, id: string, output: string | undefined): Promise<number> => {
    const branch = typeof ctx.values.branch === "string" ? ctx.values.branch : undefined;
    const print = printWarning(ctx.io);
    let kept = 0;
    const onWarning = (w: StoreWarning) => {
      if (w.code === "SECRET_REDACTED") return print({ ...w, message: `${w.message}; --no-redact keeps them` });
      if (w.code === "EXPORT_INCOMPLETE") return print({ ...w, message: `${w.code}: ${w.message}` });
      if (w.code !== "EXTENSION_KEPT") return print(w);
      if (kept++ < KEPT_SHOWN) print({ ...w, message: `${w.code}: ${w.message}` });
    };
    const redactOutput = ctx.values["no-redact"] !== true;
    const codexProvider = ctx.values["codex-provider"] as string | undefined;
    const lines = exportForeign(format, id, {
      ...storeOptions(ctx),
      onWarning,
      redactOutput,
      ...(branch === undefined ? {} : { branch }),
      ...(codexProvider === undefined ? {} : { codexProvider }),
    });
    const summary: ForeignExportSummary = { lines: 0, continued: 0, skipped: 0, converted: false };
    async function* bytes(): AsyncIterable<Buffer> {
      let step = await lines.next();
      while (step.done !== true) {
        yield foreignLineBytes(step.value);
        step = await lines.next();
      }
      Object.assign(summary, step.value);
    }
    if (ctx.values.install === true) {
      // filed where the agent resumes it from: the path depends on the records (session id, cwd, time)
      const records: unknown[] = [];
      const chunks: Buffer[] = [];
      let step = await lines.next();
      while (step.done !== true) {
        if ("record" in step.value) records.push(step.value.record);
        chunks.push(foreignLineBytes(step.value));
        step = await lines.next();
      }
      Object.assign(summary, step.value);
      const target = agentFilePath(format, records, ctx.io.env);
      if (target === null)
        throw new TranscriptStoreError(
          "INVALID_OPTION",
          `export --install: the ${format} records name no session the agent could resume (no message)`,
        );
      ensureDir(dirname(target));
      await writeNewOutput(target, chunks);
      ctx.emit({ type: "foreign_export", format, path: target, lines: summary.lines }, terminalText`${target}`);
    } else if (output !== undefined) {
      await writeNewOutput(resolve(ctx.io.cwd, output), bytes(), { force: ctx.values.force === true });
    } else {
      // gathered first, so that a failure leaves stdout empty rather than short
      const chunks: Buffer[] = [];
      for await (const c of bytes()) chunks.push(c);
      const write = ctx.io.records ?? ctx.io.stdout;
      for (const c of chunks) write(c.toString("utf8"));
    }
    if (kept > KEPT_SHOWN) ctx.io.stderr(`… ${kept} EXTENSION_KEPT warning(s) in all: kept in the export's extension records\n`);
    // a turn left out (another branch than the one exported) is never a success: the warning above named it
    return summary.skipped > 0 ? 1 : 0;
  };
}
