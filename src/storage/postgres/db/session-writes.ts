import type { Pool, PoolClient } from "./pg-client.ts";
import { TranscriptStoreError } from "../../../errors.ts";
import { appendFast, canAppendFast } from "./append-fast.ts";
import { blobHashes, storeAndLockBlobs } from "./blobs.ts";
import { headerFields } from "./header.ts";
import { fenceSession, takeLease } from "./lease.ts";
import { checkLine, type PgLimits } from "./limits.ts";
import { INFO_COLUMNS, insertEntries, listingOf, type SessionRow, toSession } from "./rows.ts";
import { withTransaction } from "./transaction.ts";
import type { PgAppendResult, PgBlobWrite, PgLeaseRequest, PgLine, PgSession } from "./types.ts";

async function insertRefs(client: PoolClient, sessionId: string, lines: readonly PgLine[]): Promise<void> {
  const hashes = blobHashes(lines.flatMap((l) => l.blobRefs ?? []));
  if (hashes.length === 0) return;
  await client.query("INSERT INTO blob_refs (session_id, sha256) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING", [
    sessionId,
    hashes,
  ]);
}

/**
 * Creates a session from its header line (`BAD_HEADER` when it is not one; `PERSISTENCE_FAILED`
 * when the id exists), optionally taking its lease in the same transaction.
 */
export async function createSession(
  pool: Pool,
  header: string,
  lease?: PgLeaseRequest,
): Promise<{ session: PgSession; token: number | null }> {
  const h = headerFields(header);
  return withTransaction(pool, "Creating a session", async (client) => {
    const { rows } = await client.query<SessionRow & { header: string }>(
      `INSERT INTO sessions (id, cwd, created, header, parent_session, title)
       VALUES ($1, $2, COALESCE($3, now()), $4, $5, $6) ON CONFLICT (id) DO NOTHING
       RETURNING ${INFO_COLUMNS}, header`,
      [h.id, h.cwd, h.created, header, h.parentSession, h.title],
    );
    if (rows[0] === undefined) throw new TranscriptStoreError("SESSION_EXISTS", `A session ${h.id} already exists`);
    const token = lease ? await takeLease(client, h.id, lease.holder, lease.ttlMs) : null;
    return { session: toSession(rows[0]), token };
  });
}

/** The `cause` of the `PERSISTENCE_FAILED` of a batch whose seq already holds another line (an import branches on it). */
export class StoredLineMismatch extends Error {
  constructor(readonly seq: number) {
    super(`seq ${seq} already holds a different line`);
  }
}

async function storedPrefix(client: PoolClient, sessionId: string, firstSeq: number, lines: readonly PgLine[], count: number) {
  const { rows } = await client.query<{ seq: number; line: string }>(
    "SELECT seq::float8 AS seq, line FROM entries WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq",
    [sessionId, firstSeq, firstSeq + count],
  );
  for (let i = 0; i < count; i++) {
    if (rows[i]?.line !== lines[i]!.line) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Seq ${firstSeq + i} of session ${sessionId} already holds a different line`, {
        cause: new StoredLineMismatch(firstSeq + i),
      });
    }
  }
}

/**
 * Appends `lines` as seqs `firstSeq`, `firstSeq + 1`, … in ONE transaction that first checks the
 * lease token (`SESSION_LOCKED`: nothing written), then stores the batch's blobs and locks every
 * referenced blob row, then inserts the entries and their blob refs and updates the session row.
 * The seq is the idempotency key: a batch retried after an ambiguous commit finds its lines
 * already stored (compared, not inserted again: `alreadyStored`); a seq past `lastSeq + 1` or
 * one holding a different line is `PERSISTENCE_FAILED`. Resolves once committed. A batch of text
 * lines (no blobs) takes the one-statement path of append-fast.ts first, with the same guarantees.
 */
export async function appendBatch(
  pool: Pool,
  limits: PgLimits,
  sessionId: string,
  token: number,
  firstSeq: number,
  lines: readonly PgLine[],
  blobs: readonly PgBlobWrite[] = [],
): Promise<PgAppendResult> {
  if (!Number.isSafeInteger(firstSeq) || firstSeq < 1) {
    throw new TranscriptStoreError("INVALID_OPTION", `firstSeq must be a positive integer, not ${firstSeq}`);
  }
  for (const l of lines) checkLine(l.line, limits);
  if (canAppendFast(lines, blobs.length, limits) && (await appendFast(pool, sessionId, token, firstSeq, lines))) {
    return { firstSeq, lastSeq: firstSeq + lines.length - 1, alreadyStored: 0 };
  }
  return withTransaction(pool, "Appending entries", async (client) => {
    const lastSeq = await fenceSession(client, sessionId, token, "Appending entries");
    if (firstSeq > lastSeq + 1) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Seq ${firstSeq} would leave a gap after ${lastSeq} in session ${sessionId}`);
    }
    const stored = Math.min(lines.length, lastSeq - firstSeq + 1);
    if (stored > 0) await storedPrefix(client, sessionId, firstSeq, lines, stored);
    const rest = lines.slice(stored);
    const result = { firstSeq, lastSeq: firstSeq + lines.length - 1, alreadyStored: stored };
    if (rest.length === 0) return result;
    const restSeq = firstSeq + stored;
    await storeAndLockBlobs(
      client,
      blobs,
      rest.flatMap((l) => l.blobRefs ?? []),
      limits,
    );
    await insertEntries(client, sessionId, restSeq, rest, limits);
    await insertRefs(client, sessionId, rest);
    const listing = listingOf(rest, restSeq);
    await client.query(
      `UPDATE sessions SET last_seq = $2, modified = now(), message_count = message_count + $3,
              first_message = COALESCE(first_message, $4), first_message_seq = COALESCE(first_message_seq, $5),
              body_bytes = body_bytes + $6
        WHERE id = $1`,
      [sessionId, result.lastSeq, listing.messages, listing.first, listing.firstSeq, listing.bytes],
    );
    return result;
  });
}

/**
 * Replaces a session's header and every entry at once (one transaction, under the lease): the
 * lines become seqs 1…n, the blob refs are recomputed from them. Readers see the old rows or the new.
 */
export async function rewriteSession(
  pool: Pool,
  limits: PgLimits,
  sessionId: string,
  token: number,
  header: string,
  lines: readonly PgLine[],
  blobs: readonly PgBlobWrite[] = [],
  alsoIn?: (client: PoolClient) => Promise<void>,
): Promise<PgSession> {
  const h = headerFields(header);
  if (h.id !== sessionId) throw new TranscriptStoreError("BAD_HEADER", `The header names session ${h.id}, not ${sessionId}`);
  for (const l of lines) checkLine(l.line, limits);
  return withTransaction(pool, "Rewriting a session", async (client) => {
    await fenceSession(client, sessionId, token, "Rewriting a session");
    if (alsoIn !== undefined) await alsoIn(client);
    await storeAndLockBlobs(
      client,
      blobs,
      lines.flatMap((l) => l.blobRefs ?? []),
      limits,
    );
    await client.query("DELETE FROM entries WHERE session_id = $1", [sessionId]);
    await insertEntries(client, sessionId, 1, lines, limits);
    await client.query("DELETE FROM blob_refs WHERE session_id = $1", [sessionId]);
    await insertRefs(client, sessionId, lines);
    const listing = listingOf(lines, 1);
    const { rows } = await client.query<SessionRow & { header: string }>(
      `UPDATE sessions SET header = $2, cwd = $3, created = COALESCE($4, created), parent_session = $5, title = $6,
              last_seq = $7, message_count = $8, first_message = $9, first_message_seq = $10, modified = now(), body_bytes = $11,
              generation = txid_current()
        WHERE id = $1 RETURNING ${INFO_COLUMNS}, header`,
      [
        sessionId,
        header,
        h.cwd,
        h.created,
        h.parentSession,
        h.title,
        lines.length,
        listing.messages,
        listing.first,
        listing.firstSeq,
        listing.bytes,
      ],
    );
    return toSession(rows[0]!);
  });
}
