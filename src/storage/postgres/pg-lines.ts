import { BLOB_REF_PREFIX, blobRefsIn } from "../../blob/blob-ref.ts";
import { TranscriptStoreError, type StoreWarning } from "../../errors.ts";
import { emptyLoadReport, type LoadReport } from "../../format/load-report.ts";
import { isRecord, type SessionEntry, type SessionHeader } from "../../format/types.ts";
import { prepareLine, type ResolvedPrepareOptions } from "../../prepare/pipeline.ts";
import type { PgBlobWrite, PgEntry, PgLine } from "../../database/index.ts";
import { messageText, preview } from "../../session/session-info.ts";

/** An entry turned into a row: its prepared line, the blobs it stores, the refs it names. */
export interface PreparedRow {
  row: PgLine;
  blobs: PgBlobWrite[];
  /** What lazy memory keeps (the prepared entry). */
  prepared: SessionEntry;
}

/** A user message's preview, for listing. */
function userPreview(entry: SessionEntry): string | null {
  if (entry.type !== "message" || !isRecord(entry.message) || entry.message.role !== "user") return null;
  const text = messageText(entry.message);
  return text === null ? null : preview(text);
}

/** The listing preview of a stored line, when it is a user message with text (null otherwise, or when it is not JSON). */
export function previewOfLine(line: string): string | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  return isRecord(value) ? userPreview(value as unknown as SessionEntry) : null;
}

/**
 * A stored line as a row, its columns read from the line: entry id and type when it is a JSON
 * entry, the preview, the blob refs. A damaged line is kept as it is (the database reports it on
 * open, as the file tree reports the line). `kept`: the row the line replaces, whose entry id stays
 * and whose type stands when the line names none (a rewrite in place: `redact`).
 */
export function storedLineRow(line: string, kept?: Pick<PgEntry, "entryId" | "kind">): PgLine {
  let value: unknown = null;
  try {
    value = JSON.parse(line);
  } catch {
    // kept as it is
  }
  const entry = isRecord(value) ? value : {};
  return {
    line,
    entryId: kept !== undefined ? kept.entryId : typeof entry.id === "string" ? entry.id : null,
    kind: typeof entry.type === "string" ? entry.type : (kept?.kind ?? null),
    firstMessage: previewOfLine(line),
    blobRefs: blobRefsIn(line),
  };
}

/**
 * Runs the prepare pipeline for one entry (pure) and describes the row it becomes. `withPreview`: the
 * row carries its listing preview when it is a user message (the store keeps only the first one, so
 * a session that has it already need not build more).
 */
export function prepareRow(
  entry: SessionEntry,
  options: ResolvedPrepareOptions,
  warn: (w: StoreWarning) => void,
  withPreview = true,
): PreparedRow {
  let prepared;
  try {
    prepared = prepareLine(entry, options);
  } catch (err) {
    if (err instanceof TranscriptStoreError) throw err;
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Entry cannot be serialized: ${(err as Error).message}`, { cause: err });
  }
  if (prepared.imagesKeptInline > 0) {
    warn({ code: "IMAGE_NOT_EXTERNALIZED", message: `${prepared.imagesKeptInline} image payload(s) are not base64; kept inline, whole` });
  }
  const refs = prepared.mayHoldRefs ? blobRefsIn(prepared.line) : [];
  return {
    row: {
      line: prepared.line,
      entryId: entry.id,
      kind: entry.type,
      firstMessage: withPreview ? userPreview(entry) : null,
      blobRefs: refs,
    },
    blobs: prepared.blobs.map((b) => ({ sha256: b.hash, bytes: b.bytes })),
    prepared: prepared.entry,
  };
}

/** Header line → header (`BAD_HEADER` when a row holds no session header). */
export function parseHeader(line: string, where: string): SessionHeader {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    value = null;
  }
  if (!isRecord(value) || value.type !== "session" || typeof value.id !== "string") {
    throw new TranscriptStoreError("BAD_HEADER", `${where} holds no valid session header`);
  }
  return value as unknown as SessionHeader;
}

/**
 * Stored rows → entries in seq order. A row that is not a JSON entry is reported in the load report
 * (malformed, with its seq as the line number) and left in the database untouched. `withRefs` holds
 * the entries whose line names something like a blob ref: the only ones eager rehydration walks.
 */
export function entriesOf(rows: readonly PgEntry[]): {
  entries: SessionEntry[];
  report: LoadReport;
  refs: Set<string>;
  withRefs: Set<SessionEntry>;
} {
  const report = emptyLoadReport();
  const entries: SessionEntry[] = [];
  const refs = new Set<string>();
  const withRefs = new Set<SessionEntry>();
  for (const row of rows) {
    let value: unknown;
    try {
      value = JSON.parse(row.line);
    } catch {
      value = null;
    }
    if (!isRecord(value) || typeof value.type !== "string" || typeof value.id !== "string") {
      report.malformed.push({ line: row.seq + 1, offset: 0, reason: `entry row seq ${row.seq} is not a JSON session entry` });
      continue;
    }
    const entry = value as unknown as SessionEntry;
    if (row.line.includes(BLOB_REF_PREFIX)) {
      withRefs.add(entry);
      for (const hash of blobRefsIn(row.line)) refs.add(hash);
    }
    entries.push(entry);
  }
  report.linesRead = rows.length + 1;
  report.entries = entries.length;
  report.bytesRead = rows.reduce((n, r) => n + Buffer.byteLength(r.line) + 1, 0);
  return { entries, report, refs, withRefs };
}
