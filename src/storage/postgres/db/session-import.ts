import type { Pool, PoolClient } from "./pg-client.ts";
import { TranscriptStoreError } from "../../../errors.ts";
import { blobHashes, storeAndLockBlobs } from "./blobs.ts";
import { headerFields } from "./header.ts";
import { checkLine, type PgLimits } from "./limits.ts";
import { fenceSession, takeLease } from "./lease.ts";
import { INFO_COLUMNS, insertEntries, lastMessageTime, listingOf, type SessionRow, toSession } from "./rows.ts";
import { boundIdle, withTransaction } from "./transaction.ts";
import type { PgBlobWrite, PgLeaseRequest, PgLine, PgSession } from "./types.ts";

/** Where an import finds the bytes of a blob the database lacks. */
export type BlobSource = (hash: string) => Uint8Array | null | Promise<Uint8Array | null>;

/** A batch of an import: its lines (the next seqs, in order) and the bytes of blobs they introduce. */
export interface PgImportBatch {
  lines: readonly PgLine[];
  blobs: readonly PgBlobWrite[];
}

/** A session read elsewhere, as `importSession` takes it. */
export interface PgImportSource {
  /** The session's header line. */
  header: string;
  /**
   * Its lines as seqs 1…n, a batch at a time (read as the transaction reaches them); called again
   * for each attempt (a retry reads them anew).
   */
  batches: () => Iterable<PgImportBatch> | AsyncIterable<PgImportBatch>;
  /**
   * Bytes of a blob the lines reference that neither the database nor the batch holds; null when
   * none. Asked inside the transaction, after the blobs it holds are locked (may be async: a source
   * read over the network).
   */
  bytesOf: BlobSource;
  /**
   * The longest a new session's import transaction may sit idle (its process paused) before the
   * server ends it, releasing what it holds (an import of the same session waits on it). A
   * re-import is bounded by its lease instead (`fenceSession`). @default 10_000
   */
  idleMs?: number;
}

/** @default 10_000 */
export const DEFAULT_IMPORT_IDLE_MS = 10_000;

/**
 * What an import did to the header: `same` (the database holds the source's), `updated` (the
 * source's header changed since the last import and the database copy's had not: brought across),
 * `kept` (the database copy's header changed since the last import, the source's did not: left alone).
 */
export type PgImportHeader = "same" | "updated" | "kept";

/** The outcome of `importSession`. */
export interface PgImportResult {
  /** The session row did not exist: the import created it. */
  created: boolean;
  /** Lines written (the others were found stored, line for line). */
  inserted: number;
  /** The database copy's last seq after the import (past the import's lines: it was continued there). */
  lastSeq: number;
  header: PgImportHeader;
}

/** The `cause` of the refusal of an import whose session was created meanwhile by another (it is retried as a re-import). */
export class SessionCreatedMeanwhile extends Error {
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} was created meanwhile`);
  }
}

/**
 * Writes a session read elsewhere (ids kept) in ONE transaction, so an interrupted import leaves
 * nothing (no session row without its entries) and a re-run starts over. `token` null: the session
 * must not exist (it is created in the transaction, invisible until COMMIT; `SessionCreatedMeanwhile`
 * when another import won). With the session's lease `token`: a re-import, fenced; the lines it
 * holds already are compared (`IMPORT_CONFLICT` when one differs: nothing written), the rest
 * appended; the header follows the rule of `PgImportHeader` (both changed: `IMPORT_CONFLICT`).
 * `sessions.imported_header` keeps the header line the last import brought, the base of that rule.
 * Every blob the lines reference is KEY SHARE-locked in this transaction before it is relied on, so
 * a concurrent gc passes it by; the ones the database lacks are sent (from the batch or `bytesOf`).
 */
export async function importSession(pool: Pool, limits: PgLimits, source: PgImportSource, token: number | null): Promise<PgImportResult> {
  const h = headerFields(source.header);
  return withTransaction(pool, "Importing a session", async (client) => {
    let lastSeq: number;
    let header: PgImportHeader = "same";
    if (token === null) {
      await boundIdle(client, source.idleMs ?? DEFAULT_IMPORT_IDLE_MS);
      const { rowCount } = await client.query(
        `INSERT INTO sessions (id, cwd, created, header, imported_header, parent_session, title)
         VALUES ($1, $2, COALESCE($3, now()), $4, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
        [h.id, h.cwd, h.created, source.header, h.parentSession, h.title],
      );
      if (rowCount === 0) {
        throw new TranscriptStoreError("SESSION_EXISTS", `A session ${h.id} already exists`, {
          cause: new SessionCreatedMeanwhile(h.id),
        });
      }
      lastSeq = 0;
    } else {
      lastSeq = await fenceSession(client, h.id, token, "Importing a session");
      header = await reconcileHeader(client, h.id, source.header);
    }
    const stored = lastSeq;
    let seq = 1;
    const rows = new RowsWritten(h.id, lastSeq, limits);
    for await (const batch of source.batches()) {
      const from = seq;
      seq += batch.lines.length;
      const known = Math.max(0, Math.min(batch.lines.length, stored - from + 1));
      if (known > 0) await compareStored(client, h.id, from, batch.lines.slice(0, known));
      if (known < batch.lines.length) await rows.write(client, { lines: batch.lines.slice(known), blobs: batch.blobs }, source.bytesOf);
    }
    await rows.finish(client);
    return { created: token === null, inserted: rows.inserted, lastSeq: rows.lastSeq, header };
  });
}

/**
 * Appends rows to a session inside the caller's transaction, batch after batch from `lastSeq + 1`
 * (an import's, or a fork's own rows after those it copied), then `finish` brings the session row
 * up to date. Every blob the rows reference is locked before it is relied on (see `missingBlobs`).
 */
export class RowsWritten {
  inserted = 0;
  private messages = 0;
  private bytes = 0;
  /** The last written message's time (ISO), the row's `modified`; null: now. */
  private lastTime: string | null = null;
  private first: string | null = null;
  private firstSeq: number | null = null;

  constructor(
    private readonly sessionId: string,
    public lastSeq: number,
    private readonly limits: PgLimits,
  ) {}

  async write(client: PoolClient, batch: PgImportBatch, bytesOf: BlobSource): Promise<void> {
    const { lines } = batch;
    if (lines.length === 0) return;
    for (const l of lines) checkLine(l.line, this.limits);
    const refs = lines.flatMap((l) => l.blobRefs ?? []);
    await storeAndLockBlobs(client, await missingBlobs(client, lines, batch.blobs, bytesOf), refs, this.limits);
    const firstSeq = this.lastSeq + 1;
    await insertEntries(client, this.sessionId, firstSeq, lines, this.limits);
    const hashes = blobHashes(refs);
    if (hashes.length > 0) {
      await client.query("INSERT INTO blob_refs (session_id, sha256) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING", [
        this.sessionId,
        hashes,
      ]);
    }
    const part = listingOf(lines, firstSeq);
    this.messages += part.messages;
    this.bytes += part.bytes;
    const time = lastMessageTime(lines);
    if (time !== null) this.lastTime = time;
    if (this.first === null && part.first !== null) [this.first, this.firstSeq] = [part.first, part.firstSeq];
    this.inserted += lines.length;
    this.lastSeq += lines.length;
  }

  /** The session row's `last_seq` and listing columns after what was written (nothing when nothing was). */
  async finish(client: PoolClient): Promise<void> {
    if (this.inserted === 0) return;
    await client.query(
      `UPDATE sessions SET last_seq = $2, modified = COALESCE($7::timestamptz, now()), message_count = message_count + $3,
              first_message = COALESCE(first_message, $4), first_message_seq = COALESCE(first_message_seq, $5),
              body_bytes = body_bytes + $6
        WHERE id = $1`,
      [this.sessionId, this.lastSeq, this.messages, this.first, this.firstSeq, this.bytes, this.lastTime],
    );
  }
}

/**
 * Decides the header of a re-import from the three versions (the source's, the database copy's,
 * and the one the last import brought) and writes it when the source's is to be brought across.
 */
async function reconcileHeader(client: PoolClient, sessionId: string, header: string): Promise<PgImportHeader> {
  const { rows } = await client.query<{ header: string; imported_header: string | null }>(
    "SELECT header, imported_header FROM sessions WHERE id = $1",
    [sessionId],
  );
  const { header: current, imported_header: base } = rows[0]!;
  if (current === header) {
    if (base !== header) await client.query("UPDATE sessions SET imported_header = $2 WHERE id = $1", [sessionId, header]);
    return "same";
  }
  if (base === header) return "kept";
  if (base !== current) {
    const why = base === null ? "its header differs from the source's" : "both its header and the source's changed since the last import";
    throw new TranscriptStoreError("IMPORT_CONFLICT", `Session ${sessionId} in the database differs from the import: ${why}`);
  }
  const h = headerFields(header);
  await client.query(
    `UPDATE sessions SET header = $2, imported_header = $2, cwd = $3, parent_session = $4, title = $5, modified = now()
      WHERE id = $1`,
    [sessionId, header, h.cwd, h.parentSession, h.title],
  );
  return "updated";
}

/** The stored lines at `from`… must be `lines`, exactly: otherwise `IMPORT_CONFLICT`. */
async function compareStored(client: PoolClient, sessionId: string, from: number, lines: readonly PgLine[]): Promise<void> {
  const { rows } = await client.query<{ line: string }>(
    "SELECT line FROM entries WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq",
    [sessionId, from, from + lines.length],
  );
  lines.forEach((l, i) => {
    if (rows[i]?.line !== l.line) {
      throw new TranscriptStoreError(
        "IMPORT_CONFLICT",
        `Session ${sessionId} in the database differs from the import: seq ${from + i} holds a different line`,
      );
    }
  });
}

/**
 * Locks (KEY SHARE) the blobs `lines` reference that the database holds, in the caller's
 * transaction, and returns the bytes of the others: from the batch, else from `bytesOf`
 * (`BLOB_MISSING` when neither has them). A blob found here stays until COMMIT: gc skips locked rows.
 */
async function missingBlobs(
  client: PoolClient,
  lines: readonly PgLine[],
  own: readonly PgBlobWrite[],
  bytesOf: BlobSource,
): Promise<PgBlobWrite[]> {
  const needed = new Set(blobHashes(lines.flatMap((l) => l.blobRefs ?? [])));
  if (needed.size === 0) return [];
  const { rows } = await client.query<{ sha256: string }>("SELECT sha256 FROM blobs WHERE sha256 = ANY($1::text[]) FOR KEY SHARE", [
    [...needed],
  ]);
  for (const row of rows) needed.delete(row.sha256);
  const byHash = new Map(own.map((b) => [b.sha256, b.bytes]));
  const out: PgBlobWrite[] = [];
  for (const hash of needed) {
    const bytes = byHash.get(hash) ?? (await bytesOf(hash));
    if (bytes === null) throw new TranscriptStoreError("BLOB_MISSING", `Blob ${hash} is referenced by the import but found nowhere`);
    out.push({ sha256: hash, bytes });
  }
  return out;
}

/**
 * Creates a session with its first rows in ONE transaction (a deferred session's first commit, a
 * fork of a session that is not stored yet, written from memory): cut short, it leaves no session,
 * never an empty one. Optionally takes its lease in the same transaction. `SESSION_EXISTS` when
 * the id exists. Like a fenced append, the transaction may sit idle (its process paused) no longer
 * than the lease's length (without a lease, `DEFAULT_IMPORT_IDLE_MS`), then the server ends it: a
 * blob row it inserted holds another writer of the same blob only that long.
 */
export async function createSessionWithRows(
  pool: Pool,
  limits: PgLimits,
  header: string,
  lines: Iterable<PgImportBatch>,
  lease?: PgLeaseRequest,
): Promise<{ session: PgSession; token: number | null }> {
  const h = headerFields(header);
  return withTransaction(pool, "Creating a session", async (client) => {
    await boundIdle(client, lease?.ttlMs ?? DEFAULT_IMPORT_IDLE_MS);
    const { rowCount } = await client.query(
      `INSERT INTO sessions (id, cwd, created, header, parent_session, title)
       VALUES ($1, $2, COALESCE($3, now()), $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
      [h.id, h.cwd, h.created, header, h.parentSession, h.title],
    );
    if (rowCount === 0) throw new TranscriptStoreError("SESSION_EXISTS", `A session ${h.id} already exists`);
    const rows = new RowsWritten(h.id, 0, limits);
    for (const batch of lines) await rows.write(client, batch, () => null);
    await rows.finish(client);
    const token = lease ? await takeLease(client, h.id, lease.holder, lease.ttlMs) : null;
    const { rows: made } = await client.query<SessionRow & { header: string }>(
      `SELECT ${INFO_COLUMNS}, header FROM sessions WHERE id = $1`,
      [h.id],
    );
    return { session: toSession(made[0]!), token };
  });
}
