import type { PoolClient } from "./pg-client.ts";
import { decodeLine } from "../../../format/decode-line.ts";
import { columnText } from "./column-text.ts";
import { exactHeaderFields } from "./header.ts";
import type { PgLimits } from "./limits.ts";
import type { PgEntry, PgLine, PgSession, PgSessionInfo } from "./types.ts";

/**
 * Columns of `sessions` that make a `PgSessionInfo`. A derived column holding U+FFFD may stand for
 * text it could not hold (column-text.ts): then the header line, or the first user message's line,
 * comes along, so that listing shows the exact text (an ordinary session pays nothing).
 */
export const INFO_COLUMNS = `id, cwd, title, created, modified, parent_session, first_message,
  message_count::float8 AS message_count, last_seq::float8 AS last_seq,
  (body_bytes + octet_length(header) + 1)::float8 AS size,
  CASE WHEN strpos(concat(cwd, title, parent_session), chr(65533)) > 0 THEN header END AS exact_header,
  CASE WHEN strpos(first_message, chr(65533)) > 0
       THEN (SELECT e.line FROM entries e WHERE e.session_id = sessions.id AND e.seq = sessions.first_message_seq)
  END AS first_message_line,
  (SELECT e.line FROM entries e WHERE e.session_id = sessions.id AND e.kind = 'session_info'
    ORDER BY e.seq DESC LIMIT 1) AS session_info_line`;

export interface SessionRow {
  id: string;
  cwd: string;
  title: string | null;
  created: Date;
  modified: Date;
  parent_session: string | null;
  first_message: string | null;
  message_count: number;
  last_seq: number;
  size: number;
  exact_header: string | null;
  first_message_line: string | null;
  session_info_line: string | null;
  header?: string;
}

/** pi's session name from the latest `session_info` line (trimmed; an empty name is a clear), as a file listing reads it. */
function sessionNameOf(line: string | null): string | null {
  if (line === null) return null;
  const decoded = decodeLine(Buffer.from(line, "utf8"));
  if (decoded.kind !== "record" || decoded.value.type !== "session_info" || typeof decoded.value.name !== "string") return null;
  return decoded.value.name.trim() || null;
}

export function toInfo(row: SessionRow): PgSessionInfo {
  const exact = row.exact_header === null ? null : exactHeaderFields(row.exact_header);
  return {
    id: row.id,
    cwd: exact?.cwd ?? row.cwd,
    title: exact === null ? row.title : exact.title,
    sessionName: sessionNameOf(row.session_info_line),
    created: row.created,
    modified: row.modified,
    parentSession: exact === null ? row.parent_session : exact.parentSession,
    firstMessage: row.first_message,
    ...(row.first_message_line === null ? {} : { firstMessageLine: row.first_message_line }),
    messageCount: row.message_count,
    lastSeq: row.last_seq,
    size: row.size,
  };
}

export function toSession(row: SessionRow & { header: string }): PgSession {
  return { ...toInfo(row), header: row.header };
}

export interface EntryRow {
  seq: number;
  entry_id: string | null;
  kind: string | null;
  line: string;
}

export function toEntry(row: EntryRow): PgEntry {
  return { seq: row.seq, entryId: row.entry_id, kind: row.kind, line: row.line };
}

/** Rows per INSERT statement when writing many lines (keeps each parameter array moderate). */
const INSERT_CHUNK = 1000;

/** The characters of the lines of `lines`. */
export function linesChars(lines: readonly PgLine[]): number {
  return lines.reduce((n, l) => n + l.line.length, 0);
}

/**
 * Inserts `lines` as seqs `firstSeq`, `firstSeq + 1`, … of `sessionId` (inside the caller's
 * transaction): up to INSERT_CHUNK lines and `arrayChars` characters per statement (a `text[]` is
 * sent as one escaped string literal), a line longer than that alone as a plain parameter.
 */
export async function insertEntries(
  client: PoolClient,
  sessionId: string,
  firstSeq: number,
  lines: readonly PgLine[],
  limits: PgLimits,
): Promise<void> {
  for (let at = 0; at < lines.length; ) {
    const first = lines[at]!;
    if (first.line.length > limits.arrayChars) {
      const [[entryId], [kind]] = entryColumns([first]);
      await client.query("INSERT INTO entries (session_id, seq, entry_id, kind, line) VALUES ($1, $2, $3, $4, $5)", [
        sessionId,
        firstSeq + at,
        entryId,
        kind,
        first.line,
      ]);
      at++;
      continue;
    }
    let end = at;
    let chars = 0;
    while (end < lines.length && end - at < INSERT_CHUNK && chars + lines[end]!.line.length <= limits.arrayChars) {
      chars += lines[end]!.line.length;
      end++;
    }
    const chunk = lines.slice(at, end);
    await client.query(
      `INSERT INTO entries (session_id, seq, entry_id, kind, line)
       SELECT $1, $2::bigint + o - 1, e, k, l FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(e, k, l, o)`,
      [sessionId, firstSeq + at, ...entryColumns(chunk), chunk.map((l) => l.line)],
    );
    at = end;
  }
}

/**
 * What listing keeps from a run of lines starting at `firstSeq`: messages counted, the first
 * message preview and its seq, and the lines' UTF-8 bytes (each with its newline; 0 unless
 * `countBytes`: a caller whose statement has the server count them).
 */
export function listingOf(
  lines: readonly PgLine[],
  firstSeq: number,
  countBytes = true,
): { messages: number; first: string | null; firstSeq: number | null; bytes: number } {
  let messages = 0;
  let bytes = 0;
  let first: string | null = null;
  let at: number | null = null;
  lines.forEach((l, i) => {
    if (l.kind === "message") messages++;
    if (countBytes) bytes += Buffer.byteLength(l.line) + 1;
    if (first === null && l.firstMessage != null) {
      first = columnText(l.firstMessage);
      at = firstSeq + i;
    }
  });
  return { messages, first, firstSeq: at, bytes };
}

const ENTRY_TIME = /"timestamp":"([^"\\]{1,64})"/;

/**
 * When the last message of `lines` was written (its entry's `timestamp`, as a file listing reads
 * it: session-body-scan.ts), as ISO text; null when no message has a valid one. Rows written in
 * bulk (an import, a fork) take it as their `modified`, so the recency order is the source's.
 */
export function lastMessageTime(lines: readonly PgLine[]): string | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i]!.kind !== "message") continue;
    const at = ENTRY_TIME.exec(lines[i]!.line.slice(0, 65536))?.[1];
    const date = at === undefined ? Number.NaN : Date.parse(at);
    return Number.isNaN(date) || date <= 0 ? null : new Date(date).toISOString();
  }
  return null;
}

/** The entry id and kind columns of `lines`, as `text` holds them (column-text.ts; the line keeps them exact). */
export function entryColumns(lines: readonly PgLine[]): [Array<string | null>, Array<string | null>] {
  return [lines.map((l) => columnText(l.entryId)), lines.map((l) => columnText(l.kind))];
}
