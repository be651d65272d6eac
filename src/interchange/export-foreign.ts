import { TranscriptStoreError, type StoreWarning } from "../errors.ts";
import { SessionManager } from "../session/session-manager.ts";
import { resolveSessionManagerOptions, type SessionManagerOptions } from "../session/session-options.ts";
import { backendOf } from "../storage/backends.ts";
import { foreignOf, type InterchangeFormat } from "./foreign-entry.ts";

/** One line of the exported transcript: a record (a JSON value), or a damaged line's exact bytes. */
export type ForeignExportLine = { line: number; record: unknown } | { line: number; raw: Buffer; terminated: boolean };

/** What an export left out: entries the session gained outside the source format (appended after import). */
export interface ForeignExportSummary {
  lines: number;
  /** Entries not imported from the source (a continuation in this store): not written. */
  skipped: number;
}

const NAMES: Record<InterchangeFormat, string> = { "claude-code": "Claude Code", codex: "Codex" };

/** The `open` ref of `idOrPath`: a stored session of exactly that id, else the argument as it is (a file). */
async function refOf(idOrPath: string, options: SessionManagerOptions): Promise<string> {
  const resolved = resolveSessionManagerOptions({ ...options, onWarning: options.onWarning ?? (() => {}) });
  return (await backendOf(resolved).locate(idOrPath, resolved)) ?? idOrPath;
}

/**
 * The source records of a session imported from `format`, in their original order, images inline
 * again (rehydrated from the blob store): equal, as JSON values, to the lines that were imported.
 * A session not imported from `format` is `INVALID_OPTION`; a session that is not imported at all too.
 */
export async function* exportForeign(
  format: InterchangeFormat,
  idOrPath: string,
  options: SessionManagerOptions = {},
): AsyncGenerator<ForeignExportLine, ForeignExportSummary> {
  const ref = await refOf(idOrPath, options);
  const warn = options.onWarning ?? ((_: StoreWarning) => {});
  const m = await SessionManager.open(ref, { ...options, readOnly: true, rehydrate: "lazy", onWarning: warn });
  try {
    const from = m.header.foreign;
    const source = typeof from === "object" && from !== null ? (from as { format?: unknown }).format : undefined;
    if (source !== format) {
      const what = typeof source === "string" ? `it was imported from ${source}` : "it was not imported from another agent";
      throw new TranscriptStoreError("INVALID_OPTION", `session ${m.sessionId} cannot be exported to ${NAMES[format]}: ${what}`);
    }
    let lines = 0;
    let skipped = 0;
    const entries = m.getEntries();
    // A line torn at an earlier import and complete at a later one has two entries: the last one is the line.
    const lastOfLine = new Map<number, number>();
    entries.forEach((e, i) => {
      const f = foreignOf(e);
      if (f !== null && f.format === format && f.part === undefined) lastOfLine.set(f.line, i);
    });
    for (const [i, entry] of entries.entries()) {
      const f = foreignOf(entry);
      if (f === null || f.format !== format) {
        skipped++;
        continue;
      }
      if (f.part !== undefined || lastOfLine.get(f.line) !== i) continue;
      lines++;
      if (f.damaged !== undefined) {
        const raw = f.damaged.base64 !== undefined ? Buffer.from(f.damaged.base64, "base64") : Buffer.from(f.damaged.text ?? "", "utf8");
        yield { line: f.line, raw, terminated: f.damaged.terminated };
      } else {
        yield { line: f.line, record: foreignOf(m.rehydrate(entry))!.record };
      }
    }
    return { lines, skipped };
  } finally {
    await m.close();
  }
}

/** `exportForeign` for Claude Code. */
export function exportClaudeCode(idOrPath: string, options: SessionManagerOptions = {}) {
  return exportForeign("claude-code", idOrPath, options);
}

/** `exportForeign` for Codex. */
export function exportCodex(idOrPath: string, options: SessionManagerOptions = {}) {
  return exportForeign("codex", idOrPath, options);
}

/** The bytes of one exported line as a transcript file holds it (a record as compact JSON, `\n` after each but a torn last line). */
export function foreignLineBytes(line: ForeignExportLine): Buffer {
  if ("record" in line) return Buffer.from(`${JSON.stringify(line.record)}\n`, "utf8");
  return line.terminated ? Buffer.concat([line.raw, Buffer.from("\n")]) : line.raw;
}
