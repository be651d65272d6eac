import { BLOB_REF_PREFIX, blobRefsIn } from "../blob/blob-ref.ts";
import { prepareLineWarned } from "../prepare/prepare-warned.ts";
import { TranscriptStoreError, type StoreWarning } from "../errors.ts";
import { emptyLoadReport, type LoadReport } from "../format/load-report.ts";
import { isRecord, type SessionEntry, type SessionHeader } from "../format/types.ts";
import type { ResolvedPrepareOptions } from "../prepare/pipeline.ts";
import { messageText, preview } from "../session/session-info.ts";

/**
 * Sessions as stored lines, for any backend that keeps a session as its header and one line per
 * entry (rows, records, an in-memory list): an entry prepared into its line with the listing columns
 * read from it, a header line parsed, stored lines back to entries with their load report. The file
 * tree has its own reader (session/); PostgreSQL and the test-only backends use these.
 */

/** One stored entry line and the columns a listing reads from it. */
export interface StoredLine {
  line: string;
  /** The entry's `id`, when it has one. */
  entryId: string | null;
  /** The entry's `type` (`"message"` lines are counted for listing). */
  kind: string | null;
  /** Preview text when this line is the session's first user message. */
  firstMessage?: string | null;
  /** Hashes or `blob:sha256:` refs this line references. */
  blobRefs?: readonly string[];
}

/** Blob bytes stored with the lines that reference them. */
export interface StoredBlob {
  sha256: string;
  bytes: Uint8Array;
}

/** A stored entry line in its session's order. */
export interface StoredEntryLine {
  seq: number;
  entryId: string | null;
  kind: string | null;
  line: string;
}

/** An entry turned into a row: its prepared line, the blobs it stores, the refs it names. */
export interface PreparedLine {
  row: StoredLine;
  blobs: StoredBlob[];
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
export function storedLineRow(line: string, kept?: Pick<StoredEntryLine, "entryId" | "kind">): StoredLine {
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
export function prepareStoredLine(
  entry: SessionEntry,
  options: ResolvedPrepareOptions,
  warn: (w: StoreWarning) => void,
  withPreview = true,
): PreparedLine {
  const prepared = prepareLineWarned(entry, options, warn);
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

/** Header line → header (`BAD_HEADER` when it holds no session header). */
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
export function entriesOf(rows: readonly StoredEntryLine[]): {
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
