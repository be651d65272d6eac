import type { Pool, PoolClient } from "./pg-client.ts";
import { TranscriptStoreError } from "../../../errors.ts";
import { type ArtifactRewrite, copyArtifacts } from "./artifacts.ts";
import { headerFields } from "./header.ts";
import type { PgLimits } from "./limits.ts";
import { fenceSession, takeLease } from "./lease.ts";
import { INFO_COLUMNS, type SessionRow, toSession } from "./rows.ts";
import { DEFAULT_IMPORT_IDLE_MS, type PgImportBatch, RowsWritten } from "./session-import.ts";
import { boundIdle, withTransaction } from "./transaction.ts";
import type { PgLeaseRequest, PgSession } from "./types.ts";

/** Options of `forkSession`. */
export interface PgForkOptions {
  /** Copy entries up to this seq (inclusive). @default every entry */
  uptoSeq?: number;
  /** Take the new session's lease in the same transaction. */
  lease?: PgLeaseRequest;
  /**
   * Rows of the fork's own to append after the copied ones, in the same transaction (a branch
   * written from memory): a fork cut short leaves no session, never one without its rows.
   */
  lines?: Iterable<PgImportBatch>;
  /**
   * Rewrites the contents of the fork's copies of the artifacts in the same transaction (an encrypted
   * session's are sealed again under the fork's id: a fork never holds the source's sealing).
   */
  artifacts?: ArtifactRewrite;
}

/**
 * Copies a session server-side into a new one named by `header` (its id, cwd, parentSession):
 * one transaction, one snapshot (REPEATABLE READ), `INSERT … SELECT` of the entries (all, or up to
 * `uptoSeq`), the blob refs and the artifacts; no line travels through this process. The source
 * needs no lease (a fork reads). `SESSION_NOT_FOUND` without the source; `ENTRY_NOT_FOUND` when
 * `uptoSeq` is past its last entry. A partial fork keeps all of the source's blob refs (a
 * superset: gc keeps a blob longer, never too short) until its next rewrite. The transaction may
 * sit idle no longer than the lease's length (`boundIdle`; without a lease, `DEFAULT_IMPORT_IDLE_MS`).
 */
export async function forkSession(
  pool: Pool,
  limits: PgLimits,
  sourceId: string,
  header: string,
  options: PgForkOptions = {},
  alsoIn?: (client: PoolClient, forkId: string) => Promise<void>,
): Promise<{ session: PgSession; token: number | null }> {
  const h = headerFields(header);
  return withTransaction(
    pool,
    "Forking a session",
    async (client) => {
      // paused, it would hold the new session's blob rows (and the locks on the source's) past its lease
      await boundIdle(client, options.lease?.ttlMs ?? DEFAULT_IMPORT_IDLE_MS);
      const { rows: src } = await client.query<{ last_seq: number; message_count: number; first_message_seq: number | null }>(
        "SELECT last_seq::float8 AS last_seq, message_count::float8 AS message_count, first_message_seq::float8 AS first_message_seq " +
          "FROM sessions WHERE id = $1",
        [sourceId],
      );
      if (src[0] === undefined) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session ${sourceId} to fork`);
      const upto = options.uptoSeq ?? src[0].last_seq;
      if (!Number.isSafeInteger(upto) || upto < 0 || upto > src[0].last_seq) {
        throw new TranscriptStoreError("ENTRY_NOT_FOUND", `Session ${sourceId} has no seq ${upto} (last ${src[0].last_seq})`);
      }
      const { rows } = await client.query<SessionRow & { header: string }>(
        `INSERT INTO sessions (id, cwd, created, header, parent_session, title, first_message, first_message_seq, message_count, last_seq,
                               body_bytes)
         SELECT $2, $3, COALESCE($4, now()), $5, $6, $7,
                CASE WHEN s.first_message_seq <= $8 THEN s.first_message END,
                CASE WHEN s.first_message_seq <= $8 THEN s.first_message_seq END,
                CASE WHEN $8 = s.last_seq THEN s.message_count
                     ELSE (SELECT count(*) FROM entries e WHERE e.session_id = s.id AND e.seq <= $8 AND e.kind = 'message') END,
                $8,
                CASE WHEN $8 = s.last_seq THEN s.body_bytes
                     ELSE (SELECT coalesce(sum(octet_length(e.line) + 1), 0) FROM entries e WHERE e.session_id = s.id AND e.seq <= $8) END
           FROM sessions s WHERE s.id = $1
         ON CONFLICT (id) DO NOTHING
         RETURNING ${INFO_COLUMNS}, header`,
        [sourceId, h.id, h.cwd, h.created, header, h.parentSession, h.title, upto],
      );
      if (rows[0] === undefined) throw new TranscriptStoreError("SESSION_EXISTS", `A session ${h.id} already exists`);
      await client.query(
        `INSERT INTO entries (session_id, seq, entry_id, kind, line)
         SELECT $2, seq, entry_id, kind, line FROM entries WHERE session_id = $1 AND seq <= $3`,
        [sourceId, h.id, upto],
      );
      await client.query("INSERT INTO blob_refs (session_id, sha256) SELECT $2, sha256 FROM blob_refs WHERE session_id = $1", [
        sourceId,
        h.id,
      ]);
      await copyArtifacts(client, sourceId, h.id);
      if (alsoIn !== undefined) await alsoIn(client, h.id);
      let session = toSession(rows[0]);
      if (options.lines !== undefined) {
        const own = new RowsWritten(h.id, upto, limits);
        for (const batch of options.lines) await own.write(client, batch, () => null);
        await own.finish(client);
        const { rows: after } = await client.query<SessionRow & { header: string }>(
          `SELECT ${INFO_COLUMNS}, header FROM sessions WHERE id = $1`,
          [h.id],
        );
        session = toSession(after[0]!);
      }
      const token = options.lease ? await takeLease(client, h.id, options.lease.holder, options.lease.ttlMs) : null;
      return { session, token };
    },
    "REPEATABLE READ",
  );
}

/**
 * Moves a session to the cwd of `header` (its rewritten header line, same id) in one transaction
 * under the lease; its entries, blobs and artifacts are rows of the session and need no copying.
 */
export async function moveSession(pool: Pool, sessionId: string, token: number, header: string): Promise<PgSession> {
  const h = headerFields(header);
  if (h.id !== sessionId) throw new TranscriptStoreError("BAD_HEADER", `The header names session ${h.id}, not ${sessionId}`);
  return withTransaction(pool, "Moving a session", async (client) => {
    await fenceSession(client, sessionId, token, "Moving a session");
    const { rows } = await client.query<SessionRow & { header: string }>(
      `UPDATE sessions SET cwd = $2, header = $3, title = $4, parent_session = $5, modified = now()
        WHERE id = $1 RETURNING ${INFO_COLUMNS}, header`,
      [sessionId, h.cwd, header, h.title, h.parentSession],
    );
    return toSession(rows[0]!);
  });
}

/** Deletes a session with its entries, blob refs and artifacts, under its lease (the blobs stay for gc). */
export async function deleteSession(pool: Pool, sessionId: string, token: number): Promise<void> {
  await withTransaction(pool, "Deleting a session", async (client) => {
    await fenceSession(client, sessionId, token, "Deleting a session");
    await client.query("DELETE FROM sessions WHERE id = $1", [sessionId]);
  });
}
