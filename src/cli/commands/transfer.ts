import { dirname, join } from "node:path";
import ndjson from "ndjson";
import { TranscriptStoreError, type StoreWarning } from "../../errors.ts";
import type { MalformedLine } from "../../format/load-report.ts";
import { FOREIGN_PROBE_RECORDS, foreignFormatHint, foreignFormatOf } from "../../format/foreign-format.ts";
import { migrateSession } from "../../format/migrate.ts";
import { isRecord, type SessionHeader } from "../../format/types.ts";
import { ensureDir, io } from "../../io.ts";
import { createExclusive } from "../../io-exclusive.ts";
import { cwdBucket, quarantinePathOf, sessionFileName } from "../../session/paths.ts";
import { SessionFile } from "../../session/session-file.ts";
import { startNewFile } from "../../storage/file/file-start.ts";
import { PostgresBackend } from "../../storage/postgres/pg-backend.ts";
import { SessionManager } from "../../session/session-manager.ts";
import { resolveSessionManagerOptions } from "../../session/session-options.ts";
import { commandInput, printWarning, storeOptions, type Command } from "../context.ts";
import { resolveArg } from "../resolve-session.ts";
import { terminalText } from "../terminal-text.ts";
import { fromMalformedRecord, isMalformedRecord, readDamagedLines, toMalformedRecord } from "../malformed-records.ts";
import { readNdjson } from "../ndjson-input.ts";
import { storeCopyMatches } from "../same-session.ts";

/** Rehydration warnings that mean an image went out as a ref instead of its data. */
const NOT_INLINED = new Set(["BLOB_MISSING", "BLOB_CORRUPT", "INVALID_BLOB_REF"]);

export const exportCommand: Command = {
  name: "export",
  readOnly: true,
  summary: "write a session as NDJSON to stdout (images inlined unless --refs; damaged lines as raw records)",
  usage: "export <id> [--refs]",
  options: { refs: { type: "boolean", default: false } },
  minArgs: 1,
  maxArgs: 1,
  async run(ctx) {
    const info = await resolveArg(ctx, ctx.positionals[0]!);
    let notInlined = 0;
    let rehydrating = false;
    const print = printWarning(ctx.io);
    const onWarning = (w: StoreWarning) => {
      if (rehydrating && NOT_INLINED.has(w.code)) notInlined++;
      print(w);
    };
    const m = await SessionManager.open(info.path, {
      ...storeOptions(ctx),
      readOnly: true,
      rehydrate: "lazy",
      onWarning,
    });
    try {
      const report = m.loadReport;
      // Read before anything is written, so a failure leaves stdout empty rather than short.
      // (a database session's malformed rows stay in the database: there is no file to read them from)
      const damaged =
        m.sessionFile !== null && (report.malformed.length > 0 || report.tornTail) ? readDamagedLines(m.sessionFile, report) : [];
      const out = ndjson.stringify();
      const done = new Promise<void>((resolve, reject) => {
        const write = ctx.io.records ?? ctx.io.stdout;
        out.on("data", (line: string) => write(line));
        out.on("end", resolve);
        out.on("error", reject);
      });
      out.write(m.header);
      rehydrating = true;
      // --refs keeps the refs the file holds; images the file holds inline stay inline (no blob of them
      // may exist, and a read-only export stores none).
      for (const entry of m.getEntries()) out.write(ctx.values.refs ? m.storage.asStored(entry) : m.rehydrate(entry));
      rehydrating = false;
      for (const line of damaged) out.write(toMalformedRecord(line));
      out.end();
      await done;
      if (damaged.length > 0) ctx.io.stderr(`${damaged.length} damaged line(s) exported as raw records; import puts them in quarantine\n`);
      if (notInlined > 0) {
        ctx.io.stderr(
          `transcript-store: ${notInlined} image(s) could not be inlined (missing or corrupt blobs); their refs were exported instead\n`,
        );
        return 1;
      }
      return 0;
    } finally {
      await m.close();
    }
  },
};

export const importCommand: Command = {
  name: "import",
  summary: "read a session as NDJSON from a file or stdin into the store (as a new file; raw records to quarantine)",
  usage: "import [file|-]",
  createsStore: true,
  options: {},
  maxArgs: 1,
  async run(ctx) {
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
    const migrated = migrateSession(
      header as SessionHeader,
      records.map((record, i) => ({ record, lineIndex: i + 1 })),
    );
    const resolved = resolveSessionManagerOptions({ ...storeOptions(ctx), rehydrate: "lazy" });
    if (resolved.store instanceof PostgresBackend) {
      if (damaged.length > 0) {
        throw new TranscriptStoreError(
          "INVALID_OPTION",
          `${damaged.length} damaged record(s): a database store has no quarantine; import into a file store instead`,
        );
      }
      const done = await resolved.store.importSession(migrated.header, migrated.entries, resolved, () => null);
      const text = terminalText`${done.status} ${done.id} (${migrated.entries.length} entries)\n${resolved.store.name}#${done.id}`;
      const record = { type: done.status, id: done.id, location: `${resolved.store.name}#${done.id}`, entries: migrated.entries.length };
      ctx.emit({ ...record, header: done.header }, text);
      return 0;
    }
    const created = new Date(Date.parse(migrated.header.timestamp) || Date.now());
    const path = join(
      resolved.sessionsDir,
      cwdBucket(migrated.header.cwd || ctx.io.cwd, resolved.layout),
      sessionFileName(created, migrated.header.id.replace(/[^A-Za-z0-9-]/g, "_")),
    );
    // Quarantine first: a crash in between leaves extra quarantine, never a session missing its lines.
    const quarantine = quarantinePathOf(path);
    const hadQuarantine = io.existsSync(quarantine);
    // Claimed empty and exclusively, so an import never replaces a session that exists (or appears
    // between a check and the write): the atomic rewrite that follows renames over this placeholder.
    ensureDir(dirname(path));
    if (!createExclusive(path)) {
      // The store holds this session already (`export | import` into the same store): a no-op when
      // it is the same, a conflict otherwise; never replaced.
      if (!(await storeCopyMatches(path, migrated.header, migrated.entries, damaged.length, storeOptions(ctx))))
        throw new TranscriptStoreError(
          "IMPORT_CONFLICT",
          `session ${migrated.header.id} already exists in the store with other content; nothing imported (${path})`,
          { path },
        );
      const text = terminalText`unchanged ${migrated.header.id} (already in the store, ${migrated.entries.length} entries)\n${path}`;
      ctx.emit({ type: "unchanged", id: migrated.header.id, path, entries: migrated.entries.length, quarantined: 0 }, text);
      return 0;
    }
    let m: SessionManager;
    try {
      if (damaged.length > 0) new SessionFile(path, { fsync: true, now: resolved.now }).quarantine(damaged);
      m = SessionManager.adopt(await startNewFile(path, migrated.header, resolved, migrated.entries), resolved);
    } catch (err) {
      if (io.statSync(path, { throwIfNoEntry: false })?.size === 0) io.rmSync(path, { force: true });
      if (damaged.length > 0 && !hadQuarantine) io.rmSync(quarantine, { force: true });
      throw err;
    }
    await m.close();
    const quarantined = damaged.length > 0 ? `, ${damaged.length} damaged line(s) to quarantine` : "";
    const text = terminalText`imported ${m.sessionId} (${migrated.entries.length} entries${quarantined})\n${path}`;
    ctx.emit({ type: "imported", id: m.sessionId, path, entries: migrated.entries.length, quarantined: damaged.length }, text);
    return 0;
  },
};
