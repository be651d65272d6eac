import { TranscriptStoreError, type StoreWarning } from "../errors.ts";
import { SessionManager } from "../session/session-manager.ts";
import { resolveSessionManagerOptions, type SessionManagerOptions } from "../session/session-options.ts";
import { backendOf } from "../storage/backends.ts";
import { isRecord, type RawRecord, type SessionEntry, type SessionHeader } from "../format/types.ts";
import { describeCounts, type RedactionCounts } from "../prepare/redact-secrets.ts";
import { sharingRedactorOf } from "../storage/sharing-key.ts";
import { redactBytesForSharing, type SharingRedactionOptions } from "../session/redact-for-sharing.ts";
import { foreignOf, type InterchangeFormat } from "./foreign-entry.ts";
import { toClaudeCode, type Continuation } from "./to-claude-code.ts";
import { foreignRecordRedactor } from "./redact-foreign.ts";
import { toCodex } from "./to-codex.ts";

/** One line of the exported transcript: a record (a JSON value), or a damaged line's exact bytes. */
export type ForeignExportLine = { line: number; record: unknown } | { line: number; raw: Buffer; terminated: boolean };

/** What an export wrote, and what it left out. */
export interface ForeignExportSummary {
  lines: number;
  /** Entries the session gained in this store after its import, converted and written after the source's records. */
  continued: number;
  /**
   * Entries gained after the import that are not on the exported path (another branch made here):
   * not written, and reported (`EXPORT_INCOMPLETE`); the CLI exits 1. Export each with `branch`.
   */
  skipped: number;
  /** True when the session was converted (not imported from this format): the lines are new records. */
  converted: boolean;
}

/** The `open` ref of `idOrPath`: a stored session of exactly that id, else the argument as it is (a file). */
async function refOf(idOrPath: string, options: SessionManagerOptions): Promise<string> {
  const resolved = resolveSessionManagerOptions({ ...options, onWarning: options.onWarning ?? (() => {}) });
  return (await backendOf(resolved).locate(idOrPath, resolved)) ?? idOrPath;
}

/** Options of `exportForeign`: where the session is (as for SessionManager), and `branch`. */
export interface ForeignExportOptions extends SessionManagerOptions {
  /** The entry whose path (root → it) is exported. @default the whole session (its source), or the leaf (a conversion) */
  branch?: string;
  /**
   * Shared output is redacted (README, Privacy): every secret in the records' strings becomes the
   * marker `export` and the views write (the store's key); ids, times, structure, image data and
   * signatures stay. `false` gives the session's records exactly; an object names other rules or a key. @default true
   */
  redactOutput?: boolean | SharingRedactionOptions;
  /**
   * Codex: the `session_meta.model_provider` to write (a conversion's, or in place of the source's),
   * so that Codex configured with that provider resumes the thread. @default the source's; "openai" for a conversion
   */
  codexProvider?: string;
}

/** An imported subagent's parent (header `parentSession`) and the source's fields about its spawn (`foreign.parent`), or null. */
function subagentParent(header: SessionHeader): { sessionId: string; spawn: RawRecord } | null {
  const from = header.foreign;
  if (typeof header.parentSession !== "string" || !isRecord(from) || !isRecord(from.parent)) return null;
  const { sessionId: _source, ...spawn } = from.parent;
  return { sessionId: header.parentSession, spawn };
}

const CONVERTERS: Record<InterchangeFormat, typeof toClaudeCode> = { "claude-code": toClaudeCode, codex: toCodex };

/**
 * A session as `format`'s transcript lines. A session imported from `format` gives its source
 * records, in their original order, images inline again (rehydrated from the blob store): equal, as
 * JSON values, to the lines that were imported (with `branch`: those of the entries on its path).
 * Any other session (native, or imported from the other agent) is converted, its path to `branch`
 * (default: the leaf), into records that agent reads (`to-claude-code.ts`, `to-codex.ts`); what it
 * cannot express is kept in its extension and reported (`EXTENSION_KEPT` warnings). An unknown
 * `branch` is `ENTRY_NOT_FOUND`, before anything is yielded. Secrets are redacted unless
 * `redactOutput: false` (one `SECRET_REDACTED` warning at the end: rule ids and counts).
 */
export async function* exportForeign(
  format: InterchangeFormat,
  idOrPath: string,
  options: ForeignExportOptions = {},
): AsyncGenerator<ForeignExportLine, ForeignExportSummary> {
  const { branch, redactOutput: redact, codexProvider, ...storeOptions } = options;
  const provider = format === "codex" && codexProvider !== undefined ? { codexProvider } : {};
  const ref = await refOf(idOrPath, storeOptions);
  const warn = storeOptions.onWarning ?? ((_: StoreWarning) => {});
  const m = await SessionManager.open(ref, { ...storeOptions, readOnly: true, rehydrate: "lazy", onWarning: warn });
  try {
    if (branch !== undefined && m.getEntry(branch) === undefined)
      throw new TranscriptStoreError("ENTRY_NOT_FOUND", `No entry ${branch} in session ${m.sessionId}`);
    const redactor = await sharingRedactorOf(m.options.store, storeOptions.root, redact);
    const counts: RedactionCounts = new Map();
    const share = redactor === null ? <T>(record: T): T => record : foreignRecordRedactor(redactor, counts);
    const from = m.header.foreign;
    const source = typeof from === "object" && from !== null ? (from as { format?: unknown }).format : undefined;
    if (source !== format) {
      const path = m.getBranch(branch).map((e) => m.rehydrate(e));
      let lines = 0;
      const subagentOf = subagentParent(m.header);
      for (const record of CONVERTERS[format](path, { sessionId: m.sessionId, cwd: m.header.cwd, warn, subagentOf, ...provider }))
        yield { line: ++lines, record: share(record) };
      // the agent's transcript is one path: the other branches (forks of the path) are left out, and said so
      const left = branch === undefined ? branchedOff(m.getEntries(), path) : [];
      reportLeftOut(warn, m.sessionId, format, left);
      reportRedacted(warn, m.sessionId, format, counts);
      return { lines, continued: 0, skipped: left.length, converted: true };
    }
    let lines = 0;
    let nextOrdinal: number | undefined;
    const entries = branch === undefined ? m.getEntries() : m.getBranch(branch);
    // the turns added here since the import: those on the exported path are converted after the source's records
    const path = m.getBranch(branch);
    const continued = new Set(path.filter((e) => !isFrom(e, format)).map((e) => e.id));
    const left = entries.filter((e) => !isFrom(e, format) && !continued.has(e.id));
    // A line torn at an earlier import and complete at a later one has two entries: the last one is the line.
    const lastOfLine = new Map<number, number>();
    entries.forEach((e, i) => {
      const f = foreignOf(e);
      if (f !== null && f.format === format && f.part === undefined) lastOfLine.set(f.line, i);
    });
    for (const [i, entry] of entries.entries()) {
      const f = foreignOf(entry);
      if (f === null || f.format !== format) continue;
      if (f.part !== undefined || lastOfLine.get(f.line) !== i) continue;
      lines++;
      if (f.damaged !== undefined) {
        const raw = f.damaged.base64 !== undefined ? Buffer.from(f.damaged.base64, "base64") : Buffer.from(f.damaged.text ?? "", "utf8");
        yield {
          line: f.line,
          raw: redactor === null ? raw : redactBytesForSharing(raw, redactor, counts),
          terminated: f.damaged.terminated,
        };
      } else {
        const record = foreignOf(m.rehydrate(entry))!.record;
        if (isRecord(record) && typeof record.ordinal === "number" && Number.isInteger(record.ordinal))
          nextOrdinal = Math.max(nextOrdinal ?? 0, record.ordinal + 1);
        yield { line: f.line, record: share(provider.codexProvider === undefined ? record : withProvider(record, provider.codexProvider)) };
      }
    }
    if (continued.size > 0) {
      const continuation: Continuation = {
        entries: continued,
        after: sourceRecordBefore(path, format),
        ...(nextOrdinal === undefined ? {} : { ordinal: nextOrdinal }),
      };
      const rehydrated = path.map((e) => m.rehydrate(e));
      const options = { sessionId: m.sessionId, cwd: m.header.cwd, warn, subagentOf: subagentParent(m.header), continuation };
      for (const record of CONVERTERS[format](rehydrated, options)) yield { line: ++lines, record: share(record) };
    }
    reportLeftOut(warn, m.sessionId, format, left);
    reportRedacted(warn, m.sessionId, format, counts);
    return { lines, continued: continued.size, skipped: left.length, converted: false };
  } finally {
    await m.close();
  }
}

/** A Codex record with `model_provider` set, when it is a `session_meta` (the envelope's, or a pre-envelope meta line's). */
function withProvider(record: unknown, provider: string): unknown {
  if (!isRecord(record)) return record;
  if (record.type === "session_meta" && isRecord(record.payload))
    return { ...record, payload: { ...record.payload, model_provider: provider } };
  return record;
}

/**
 * The messages of `all` on another branch than `path`: not on it, but forking from it (their
 * ancestors reach it). A separate root (a Claude Code transcript starts one at each compaction) is
 * no branch: its entries are not counted.
 */
function branchedOff(all: readonly SessionEntry[], path: readonly SessionEntry[]): SessionEntry[] {
  const onPath = new Set(path.map((e) => e.id));
  const byId = new Map(all.map((e) => [e.id, e]));
  const forks = new Map<string, boolean>();
  const forksOff = (entry: SessionEntry): boolean => {
    const walked: string[] = [];
    let answer = false;
    for (let e: SessionEntry | undefined = entry; e !== undefined; ) {
      if (onPath.has(e.id)) {
        answer = walked.length > 0;
        break;
      }
      const known = forks.get(e.id);
      if (known !== undefined) {
        answer = known;
        break;
      }
      walked.push(e.id);
      e = e.parentId === null || e.parentId === undefined ? undefined : byId.get(e.parentId);
    }
    for (const id of walked) forks.set(id, answer);
    return answer;
  };
  // turns: a kept record of an imported transcript hanging beside the path (Claude Code's bookkeeping lines) is none
  return all.filter((e) => e.type === "message" && !onPath.has(e.id) && forksOff(e));
}

/** One `EXPORT_INCOMPLETE` warning naming what an export left out (another branch than the one exported). */
function reportLeftOut(warn: (w: StoreWarning) => void, sessionId: string, format: InterchangeFormat, left: SessionEntry[]): void {
  if (left.length === 0) return;
  warn({
    code: "EXPORT_INCOMPLETE",
    message:
      `export ${sessionId} --to ${format}: ${left.length} entr(y/ies) on another branch than the one exported ` +
      `(first: ${left[0]!.id}) not written: export that branch too with --branch <entry>`,
  });
}

/** True when the entry was imported from `format` (its record is written as it was). */
function isFrom(entry: SessionEntry, format: InterchangeFormat): boolean {
  return foreignOf(entry)?.format === format;
}

/**
 * The source record a continuation goes on from: Claude Code's last record on the path that is in
 * its `uuid` chain (the new records' parent); Codex's last `turn_context` (the model in use).
 */
function sourceRecordBefore(path: readonly SessionEntry[], format: InterchangeFormat): RawRecord | null {
  for (let i = path.length - 1; i >= 0; i--) {
    const f = foreignOf(path[i]!);
    if (f === null || f.format !== format || !isRecord(f.record)) continue;
    if (format === "claude-code" && typeof f.record.uuid === "string") return f.record;
    if (format === "codex" && f.record.type === "turn_context") return f.record;
  }
  return null;
}

/** One `SECRET_REDACTED` warning for an export in which something was redacted: rule ids and counts, never a secret. */
function reportRedacted(warn: (w: StoreWarning) => void, sessionId: string, format: InterchangeFormat, counts: RedactionCounts): void {
  if (counts.size > 0) warn({ code: "SECRET_REDACTED", message: `export ${sessionId} --to ${format}: redacted ${describeCounts(counts)}` });
}

/** `exportForeign` for Claude Code. */
export function exportClaudeCode(idOrPath: string, options: ForeignExportOptions = {}) {
  return exportForeign("claude-code", idOrPath, options);
}

/** `exportForeign` for Codex. */
export function exportCodex(idOrPath: string, options: ForeignExportOptions = {}) {
  return exportForeign("codex", idOrPath, options);
}

/** The bytes of one exported line as a transcript file holds it (a record as compact JSON, `\n` after each but a torn last line). */
export function foreignLineBytes(line: ForeignExportLine): Buffer {
  if ("record" in line) return Buffer.from(`${JSON.stringify(line.record)}\n`, "utf8");
  return line.terminated ? Buffer.concat([line.raw, Buffer.from("\n")]) : line.raw;
}
