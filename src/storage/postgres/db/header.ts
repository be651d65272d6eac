import { TranscriptStoreError } from "../../../errors.ts";
import { checkedSessionId, columnText, isColumnText } from "./column-text.ts";

/**
 * The earliest instant `timestamptz` holds is in 4714 BC; a header timestamp before the year 4712
 * BC (or not a date) leaves `created` to the insert's time: the header line keeps it exactly.
 */
const EARLIEST_TIMESTAMP = Date.UTC(-4711, 0, 1);

/** The header fields the sessions table keeps in columns, as its columns hold them (column-text.ts: the header line stays exact). */
export interface HeaderFields {
  id: string;
  cwd: string;
  created: Date | null;
  parentSession: string | null;
  title: string | null;
}

/**
 * Reads the columns of a session row from its header line; a line that is not a session header, or
 * whose id a key column cannot hold exactly, is `BAD_HEADER`.
 */
export function headerFields(line: string): HeaderFields {
  // JSON escapes NUL and lone surrogates; a header line holding one raw would not be stored exactly
  if (!isColumnText(line)) throw new TranscriptStoreError("BAD_HEADER", "A header line holds a raw NUL or a lone surrogate");
  const h = exactHeaderFields(line);
  return {
    ...h,
    id: checkedSessionId(h.id),
    cwd: columnText(h.cwd),
    parentSession: columnText(h.parentSession),
    title: columnText(h.title),
  };
}

/** The header fields as the header line holds them (listing shows these where a column could not: column-text.ts). */
export function exactHeaderFields(line: string): HeaderFields {
  let header: unknown;
  try {
    header = JSON.parse(line);
  } catch {
    header = null;
  }
  const h = header as Record<string, unknown> | null;
  if (h === null || typeof h !== "object" || h.type !== "session" || typeof h.id !== "string" || typeof h.cwd !== "string" || h.id === "") {
    throw new TranscriptStoreError("BAD_HEADER", `Not a session header line: ${JSON.stringify(line.slice(0, 120))}`);
  }
  const created = typeof h.timestamp === "string" ? new Date(h.timestamp) : null;
  return {
    id: h.id,
    cwd: h.cwd,
    created: created !== null && created.getTime() >= EARLIEST_TIMESTAMP ? created : null,
    parentSession: typeof h.parentSession === "string" ? h.parentSession : null,
    title: typeof h.title === "string" ? h.title : null,
  };
}
