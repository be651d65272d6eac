import { TranscriptStoreError } from "../errors.ts";
import type { LoadReport, MalformedLine } from "../format/load-report.ts";
import { isRecord } from "../format/types.ts";
import { TORN_TAIL_REASON } from "../format/session-parser.ts";
import { scanSessionFile } from "../session/session-file-reader.ts";

/**
 * The export stream's record for a line of the session file that is not an entry (malformed, or a
 * torn final fragment): its exact bytes travel as base64 so `import` can put them in the new
 * session's quarantine. Reserved type; it has no `id`, so it can never be taken for an entry.
 */
export const MALFORMED_RECORD_TYPE = "transcript_store_malformed";

export interface MalformedRecord {
  type: typeof MALFORMED_RECORD_TYPE;
  /** 1-based line number in the exported file. */
  line: number;
  /** Byte offset of the line in the exported file. */
  offset: number;
  reason: string;
  /** The line's exact bytes (without its `\n`). */
  raw_base64: string;
}

/**
 * The raw bytes of every line the load reported as damaged, read back from the file (the session
 * manager keeps positions, not bytes). Only called when the report found something. Throws
 * `PERSISTENCE_FAILED` when the file no longer shows the same damage (a writer repaired or
 * rewrote it meanwhile): an export must not silently miss lines.
 */
export function readDamagedLines(path: string, report: LoadReport): MalformedLine[] {
  const scanned = scanSessionFile(path, { mapRecord: () => ({}) });
  const found = scanned === null ? [] : scanned.malformed;
  const byOffset = new Map(found.map((m) => [m.offset, m]));
  const lines: MalformedLine[] = [];
  for (const wanted of report.malformed) {
    const got = byOffset.get(wanted.offset);
    if (got === undefined || got.line !== wanted.line) throw changedUnderfoot(path);
    lines.push(got);
  }
  if (report.tornTail) {
    if (scanned === null || scanned.tornTail === null) throw changedUnderfoot(path);
    lines.push({ line: scanned.linesRead, offset: scanned.tornTail.offset, reason: TORN_TAIL_REASON, bytes: scanned.tornTail.bytes });
  }
  return lines;
}

function changedUnderfoot(path: string): TranscriptStoreError {
  return new TranscriptStoreError(
    "PERSISTENCE_FAILED",
    "The session's damaged lines changed while it was exported (a writer repaired it?); run export again",
    { path },
  );
}

export function toMalformedRecord(line: MalformedLine): MalformedRecord {
  return {
    type: MALFORMED_RECORD_TYPE,
    line: line.line,
    offset: line.offset,
    reason: line.reason,
    raw_base64: line.bytes.toString("base64"),
  };
}

/** True for a record of the reserved type (well-formed or not). */
export function isMalformedRecord(value: unknown): boolean {
  return isRecord(value) && value.type === MALFORMED_RECORD_TYPE;
}

/** The line a malformed record carries; `INVALID_OPTION` when the record itself is damaged. */
export function fromMalformedRecord(value: unknown, index: number): MalformedLine {
  const bad = (why: string) => new TranscriptStoreError("INVALID_OPTION", `record ${index} (${MALFORMED_RECORD_TYPE}) ${why}`);
  if (!isRecord(value)) throw bad("is not an object");
  const { line, offset, reason, raw_base64: raw } = value;
  if (typeof raw !== "string") throw bad("has no raw_base64 string");
  const bytes = Buffer.from(raw, "base64");
  if (bytes.toString("base64") !== raw) throw bad("has raw_base64 that is not canonical base64");
  if (!Number.isSafeInteger(line) || (line as number) < 1) throw bad("has no positive integer line");
  return {
    line: line as number,
    offset: Number.isSafeInteger(offset) && (offset as number) >= 0 ? (offset as number) : 0,
    reason: typeof reason === "string" ? reason : "malformed line (imported)",
    bytes,
  };
}
