import type { Pool } from "./pg-client.ts";
import type { PgLimits } from "./limits.ts";
import { entryColumns, linesChars, listingOf } from "./rows.ts";
import { withClient } from "./transaction.ts";
import type { PgLine } from "./types.ts";

/** Lines up to which a batch without blobs can take the one-statement path. */
const FAST_MAX_LINES = 1000;

/**
 * True when `appendFast` may write the batch: no blob bytes, no blob refs, not too many lines nor
 * characters for one parameter, and every line non-empty without a raw newline (a serialized entry
 * never holds one: JSON escapes it), so that the lines can travel joined by newlines (see `appendFast`).
 */
export function canAppendFast(lines: readonly PgLine[], blobCount: number, limits: PgLimits): boolean {
  return (
    blobCount === 0 &&
    lines.length > 0 &&
    lines.length <= FAST_MAX_LINES &&
    lines.every((l) => !l.blobRefs?.length && l.line.length > 0 && !l.line.includes("\n")) &&
    linesChars(lines) <= limits.arrayChars
  );
}

/**
 * The common append — a batch of text lines right after the session's last seq — as ONE statement,
 * its own transaction (one round trip): a data-modifying CTE updates the session row only `WHERE`
 * the lease token is current and `last_seq = firstSeq - 1`, and the entries are inserted `FROM` its
 * result, so they are written exactly when the fence holds. The UPDATE takes the row lock (a
 * concurrent takeover is seen: the row is re-checked after the lock wait), and the statement is
 * atomic. Returns false, having written nothing, when the row did not match (not our lease any
 * more, a retried batch already stored, a gap, no session): the transactional path then decides.
 *
 * The lines go as ONE text parameter, joined by newlines, and the server splits them again
 * (`string_to_array`): a `text[]` parameter is a literal in which pg quotes every line and doubles
 * each of its many quotes and backslashes (a new string per line), and the server parses that back; the
 * joined text is neither. Their bytes for the listing's size are counted by the server too:
 * `octet_length` of the joined text is the lines' bytes plus one newline between two, so the lines
 * and a newline after each are that plus one (not a pass over every line here).
 */
export async function appendFast(
  pool: Pool,
  sessionId: string,
  token: number,
  firstSeq: number,
  lines: readonly PgLine[],
): Promise<boolean> {
  const listing = listingOf(lines, firstSeq, false);
  const { rowCount } = await withClient(pool, "Appending entries", (client) =>
    client.query(
      `WITH fenced AS (
         UPDATE sessions SET last_seq = $3::bigint + $4::bigint - 1, modified = now(), message_count = message_count + $5,
                body_bytes = body_bytes + octet_length($10::text) + 1,
                first_message = COALESCE(first_message, $6), first_message_seq = COALESCE(first_message_seq, $7)
          WHERE id = $1 AND lease_token = $2 AND lease_holder IS NOT NULL AND last_seq = $3::bigint - 1
          RETURNING id)
       INSERT INTO entries (session_id, seq, entry_id, kind, line)
       SELECT fenced.id, $3::bigint + o - 1, e, k, l
         FROM fenced, unnest($8::text[], $9::text[], string_to_array($10::text, E'\\n')) WITH ORDINALITY AS u(e, k, l, o)`,
      [
        sessionId,
        token,
        firstSeq,
        lines.length,
        listing.messages,
        listing.first,
        listing.firstSeq,
        ...entryColumns(lines),
        lines.map((l) => l.line).join("\n"),
      ],
    ),
  );
  return rowCount === lines.length;
}
