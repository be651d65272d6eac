import ndjson from "ndjson";
import { TranscriptStoreError, type StoreWarning } from "../../errors.ts";
import type { LoadReport, MalformedLine } from "../../format/load-report.ts";
import { FOREIGN_PROBE_RECORDS, foreignFormatHint, foreignFormatOf } from "../../format/foreign-format.ts";
import { migrateSession } from "../../format/migrate.ts";
import { isRecord, type SessionHeader } from "../../format/types.ts";
import { SessionManager } from "../../session/session-manager.ts";
import { quarantineRecord } from "../../session/quarantine-record.ts";
import { backendOf } from "../../storage/backends.ts";
import { snapshotOfEntries } from "../../storage/session-snapshot.ts";
import { type ResolvedSessionManagerOptions, resolveSessionManagerOptions } from "../../session/session-options.ts";
import { type CommandContext, commandInput, lazyImages, printWarning, storeOptions, type Command } from "../context.ts";
import { exportStreamed } from "../export-stream.ts";
import { streamableFile } from "../../storage/session-file-lines.ts";
import { resolveArg } from "../resolve-session.ts";
import { terminalText } from "../terminal-text.ts";
import { fromMalformedRecord, isMalformedRecord, readDamagedLines, toMalformedRecord } from "../malformed-records.ts";
import { readNdjson } from "../ndjson-input.ts";
import { EXPORT_TARGETS } from "../export-targets.ts";
import { runForeignImport } from "./foreign-transfer.ts";
import { UsageError } from "../context.ts";
import { encryptsNewSessions, redactsOnWrite, sealImported } from "../write-redaction.ts";
import { redactBytesForSharing, redactForSharing } from "../../session/redact-for-sharing.ts";
import type { RedactionCounts } from "../../prepare/redact-secrets.ts";
import { describeCounts } from "../../prepare/redact-secrets.ts";
import { sharingRedactorOf } from "../../storage/sharing-key.ts";

/** Rehydration warnings that mean an image went out as a ref instead of its data. */
const NOT_INLINED = new Set(["BLOB_MISSING", "BLOB_CORRUPT", "INVALID_BLOB_REF"]);

export const exportCommand: Command = {
  name: "export",
  readOnly: true,
  summary:
    "write a session as NDJSON to stdout (secrets redacted unless --no-redact; images inlined unless --refs; " +
    "damaged lines as raw records), or --to another format",
  usage:
    `export <id> [--refs] [--no-redact] [--to ${Object.keys(EXPORT_TARGETS).join("|")} [-o <file> [--force]] [--branch <entryId>]] ` +
    "[--install] [--codex-provider <name>]",
  options: {
    refs: { type: "boolean", default: false },
    "no-redact": { type: "boolean", default: false },
    to: { type: "string" },
    output: { type: "string", short: "o" },
    force: { type: "boolean", default: false },
    branch: { type: "string" },
    install: { type: "boolean", default: false },
    "codex-provider": { type: "string" },
  },
  minArgs: 1,
  maxArgs: 1,
  async run(ctx) {
    const to = ctx.values.to as string | undefined;
    const output = ctx.values.output as string | undefined;
    if (to !== undefined && !Object.hasOwn(EXPORT_TARGETS, to))
      throw new UsageError(`export: --to must be one of ${Object.keys(EXPORT_TARGETS).join(", ")}`);
    if (to === undefined && output !== undefined) throw new UsageError("export: -o needs --to (the NDJSON export writes to stdout)");
    if (to === undefined && ctx.values.branch !== undefined) throw new UsageError("export: --branch needs --to");
    if (output === undefined && ctx.values.force === true) throw new UsageError("export: --force needs -o (it replaces that file)");
    if (ctx.values.install === true && to !== "claude-code" && to !== "codex")
      throw new UsageError("export: --install needs --to claude-code or --to codex");
    if (ctx.values.install === true && output !== undefined) throw new UsageError("export: --install and -o name two places: give one");
    if (ctx.values["codex-provider"] !== undefined && to !== "codex") throw new UsageError("export: --codex-provider needs --to codex");
    const info = await resolveArg(ctx, ctx.positionals[0]!);
    if (to !== undefined) return EXPORT_TARGETS[to]!(ctx, info.path, output);
    let notInlined = 0;
    let rehydrating = false;
    const print = printWarning(ctx.io);
    const onWarning = (w: StoreWarning) => {
      if (rehydrating && NOT_INLINED.has(w.code)) notInlined++;
      print(w);
    };
    // A clean session file streams, a line at a time (never loaded); anything else goes through the loader.
    const resolved = resolveSessionManagerOptions({ ...storeOptions(ctx), readOnly: true, onWarning });
    const file = backendOf(resolved).supports.sessionFiles ? await streamableFile(info.path) : null;
    if (file !== null) {
      rehydrating = true;
      const counts = await exportStreamed(file, resolved, {
        refs: ctx.values.refs === true,
        redact: ctx.values["no-redact"] === true ? null : { root: storeOptions(ctx).root },
        write: ctx.io.records ?? ctx.io.stdout,
        onWarning,
      });
      rehydrating = false;
      return exportEnd(ctx, counts, 0, notInlined);
    }
    const m = await SessionManager.open(info.path, {
      ...storeOptions(ctx),
      readOnly: true,
      ...lazyImages(ctx),
      onWarning,
    });
    try {
      const report = m.loadReport;
      // Read before anything is written, so a failure leaves stdout empty rather than short.
      const damaged =
        report.malformed.length === 0 && !report.tornTail
          ? []
          : m.sessionFile !== null
            ? readDamagedLines(m.sessionFile, report)
            : await storedDamagedLines(resolveSessionManagerOptions({ ...storeOptions(ctx), readOnly: true }), m.sessionId, report);
      const out = ndjson.stringify();
      const done = new Promise<void>((resolve, reject) => {
        const write = ctx.io.records ?? ctx.io.stdout;
        out.on("data", (line: string) => write(line));
        out.on("end", resolve);
        out.on("error", reject);
      });
      // Shared output is redacted unless asked otherwise (README, Privacy): the store's key makes the markers.
      const redactor = await sharingRedactorOf(m.options.store, storeOptions(ctx).root, ctx.values["no-redact"] !== true);
      const counts: RedactionCounts = new Map();
      const share = <T>(value: T): T => (redactor === null ? value : redactForSharing(value, redactor, counts));
      // The export is clear text: its header names no key (an import of it would claim sealed lines).
      const { encryption: _sealed, ...header } = m.header;
      out.write(share(header as typeof m.header));
      rehydrating = true;
      // --refs keeps the refs the file holds; images the file holds inline stay inline (no blob of them
      // may exist, and a read-only export stores none).
      for (const entry of m.getEntries()) out.write(share(ctx.values.refs ? m.storage.asStored(entry) : m.rehydrate(entry)));
      rehydrating = false;
      for (const line of damaged) {
        out.write(toMalformedRecord(redactor === null ? line : { ...line, bytes: redactBytesForSharing(line.bytes, redactor, counts) }));
      }
      out.end();
      await done;
      return exportEnd(ctx, counts, damaged.length, notInlined);
    } finally {
      await m.close();
    }
  },
};

/** What an NDJSON export says on stderr when it is done, and its exit code (1: an image went out as a ref). */
function exportEnd(ctx: CommandContext, counts: RedactionCounts, damaged: number, notInlined: number): number {
  if (counts.size > 0)
    ctx.io.stderr(`transcript-store: secrets redacted in the export (${describeCounts(counts)}); --no-redact keeps them\n`);
  if (damaged > 0) ctx.io.stderr(`${damaged} damaged line(s) exported as raw records; import puts them in quarantine\n`);
  if (notInlined > 0) {
    ctx.io.stderr(
      `transcript-store: ${notInlined} image(s) could not be inlined (missing or corrupt blobs); their refs were exported instead\n`,
    );
    return 1;
  }
  return 0;
}

/**
 * The damaged lines of a session held elsewhere than in a file (a database's rows that are not
 * JSON entries), read through the storage seam as stored: report line `n` is stored line `n - 1`
 * after the header.
 */
async function storedDamagedLines(options: ResolvedSessionManagerOptions, id: string, report: LoadReport): Promise<MalformedLine[]> {
  const wanted = new Map(report.malformed.map((m) => [m.line, m]));
  const backend = backendOf(options);
  const ref = await backend.locate(id, options);
  if (ref === null) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session ${id}`);
  const out: MalformedLine[] = [];
  let line = 1;
  for await (const text of (await backend.exportSnapshot(ref, options)).lines()) {
    const bad = wanted.get(++line);
    if (bad !== undefined) out.push({ line, offset: bad.offset, reason: bad.reason, bytes: Buffer.from(text, "utf8") });
  }
  if (out.length !== wanted.size) {
    throw new TranscriptStoreError("PERSISTENCE_FAILED", "The session's damaged lines changed while it was exported; run export again", {
      path: ref,
    });
  }
  return out;
}

export const importCommand: Command = {
  name: "import",
  summary:
    "read a session as NDJSON from a file or stdin into the store (ids kept; raw records to quarantine), " +
    "or --from claude-code|codex transcripts",
  usage: "import [file|-] [--redact] | import --from claude-code|codex [--dry-run | --follow] [paths…]",
  createsStore: true,
  options: {
    from: { type: "string" },
    "dry-run": { type: "boolean", default: false },
    redact: { type: "boolean", default: false },
    follow: { type: "boolean", default: false },
  },
  async run(ctx) {
    const from = ctx.values.from as string | undefined;
    if (from !== undefined) return runForeignImport(ctx, from);
    if (ctx.values["dry-run"] === true) throw new UsageError("import: --dry-run goes with --from");
    if (ctx.values.follow === true) throw new UsageError("import: --follow goes with --from");
    if (ctx.positionals.length > 1) throw new UsageError("import: too many arguments (usage: transcript-store import [file|-])");
    const input = await readNdjson(commandInput(ctx, ctx.positionals[0]));
    if (input.length === 0)
      throw new TranscriptStoreError(
        "NO_INPUT",
        "no input (pipe a session in: transcript-store export <id> | transcript-store import, or name a file)",
      );
    const [header, ...rest] = input;
    if (!isRecord(header) || header.type !== "session" || typeof header.id !== "string") {
      const foreign = input
        .slice(0, FOREIGN_PROBE_RECORDS)
        .map(foreignFormatOf)
        .find((f) => f !== null);
      const hint = foreign === undefined ? "" : `: ${foreignFormatHint(foreign)}`;
      throw new TranscriptStoreError("BAD_HEADER", `the first NDJSON record must be a session header${hint}`);
    }
    const records: Array<Record<string, unknown>> = [];
    const damaged: MalformedLine[] = [];
    rest.forEach((record, i) => {
      if (isMalformedRecord(record)) damaged.push(fromMalformedRecord(record, i + 1));
      else if (isRecord(record) && typeof record.type === "string") records.push(record);
      else throw new TranscriptStoreError("INVALID_OPTION", `record ${i + 1}: every record must be an object with a type`);
    });
    // An export's lines are clear: a header that names a key (an older export of a sealed session) does not hold.
    const { encryption: _sealed, ...clearHeader } = header as SessionHeader;
    const migrated = migrateSession(
      clearHeader as SessionHeader,
      records.map((record, i) => ({ record, lineIndex: i + 1 })),
    );
    const resolved = resolveSessionManagerOptions({
      ...storeOptions(ctx),
      cwd: ctx.io.cwd,
      ...lazyImages(ctx),
      ...(redactsOnWrite(ctx) ? { redact: "secrets" as const } : {}),
      onWarning: printWarning(ctx.io),
    });
    const at = resolved.now().toISOString();
    const quarantine = damaged.map((d) => quarantineRecord(migrated.header.id, d, at).slice(0, -1));
    const snapshot = snapshotOfEntries(migrated.header, migrated.entries, resolved.prepare, { quarantine, warn: resolved.onWarning });
    const done = await backendOf(resolved).importSnapshot(snapshot, resolved);
    // With a store key (or a store that encrypts new sessions), the new session is sealed at once, all or nothing.
    if (done.status === "created" && resolved.store === null && (ctx.key() !== null || encryptsNewSessions(ctx)))
      await sealImported(ctx, done.location);
    const entries = migrated.entries.length;
    const quarantined = done.status === "created" ? damaged.length : 0;
    const type = done.status === "created" ? "imported" : done.status;
    const note =
      done.status === "unchanged" ? "already in the store, " : done.status === "appended" ? "the store held its beginning, " : "";
    const damagedNote = quarantined > 0 ? `, ${quarantined} damaged line(s) to quarantine` : "";
    const text = terminalText`${type} ${done.id} (${note}${entries} entries${damagedNote})\n${done.location}`;
    ctx.emit({ type, id: done.id, path: done.location, location: done.location, entries, quarantined }, text);
    return 0;
  },
};
