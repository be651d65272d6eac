import { TranscriptStoreError } from "../../../errors.ts";
import type { Pool } from "./pg-client.ts";
import { withTransaction } from "./transaction.ts";

/**
 * The lifecycle of sessions in the database (`session_lifecycle`, schema step 8). A trashed session
 * keeps its rows: its blob refs keep its blobs from gc until it is purged. Its lease is taken by
 * the trash (`TRASH_HOLDER`, never expiring, never expiring in practice, the fencing token bumped), so no writer can append to
 * it and a paused writer's late append is refused by the fence; `restore` releases it.
 */
export const TRASH_HOLDER = "transcript-store:trash";

/** When the trash's lease ends: never in practice (a finite time: the driver reads 'infinity' as a number, not a Date). */
export const TRASH_LEASE_END = "9999-12-31T00:00:00Z";

/** One row of the lifecycle table with the session's size. */
export interface PgLifecycleRow {
  sessionId: string;
  cwd: string;
  pinned: boolean;
  archived: boolean;
  trashedAt: Date | null;
  /** Header and entry bytes plus artifact bytes. */
  bytes: number;
}

const SIZE = `(octet_length(s.header) + 1 + s.body_bytes
  + COALESCE((SELECT sum(a.size) FROM artifacts a WHERE a.session_id = s.id), 0))::float8`;

function rowOf(r: {
  session_id: string;
  cwd: string;
  pinned: boolean | null;
  archived: boolean | null;
  trashed_at: Date | null;
  bytes: number;
}): PgLifecycleRow {
  return {
    sessionId: r.session_id,
    cwd: r.cwd,
    pinned: r.pinned === true,
    archived: r.archived === true,
    trashedAt: r.trashed_at,
    bytes: r.bytes,
  };
}

/** Sessions with a flag set or in the trash. */
export async function lifecycleRows(pool: Pool): Promise<PgLifecycleRow[]> {
  return withTransaction(pool, "Reading session lifecycle", async (client) => {
    const { rows } = await client.query(
      `SELECT l.session_id, s.cwd, l.pinned, l.archived, l.trashed_at, ${SIZE} AS bytes
         FROM session_lifecycle l JOIN sessions s ON s.id = l.session_id
        WHERE l.pinned OR l.archived OR l.trashed_at IS NOT NULL
        ORDER BY l.trashed_at NULLS LAST, l.session_id`,
    );
    return rows.map(rowOf);
  });
}

/** Sets `pinned` or `archived` of a session. */
export async function setLifecycleFlag(pool: Pool, sessionId: string, flag: "pinned" | "archived", value: boolean): Promise<void> {
  const column = flag === "pinned" ? "pinned" : "archived";
  await withTransaction(pool, `Setting ${column}`, async (client) => {
    const { rowCount } = await client.query(
      `INSERT INTO session_lifecycle (session_id, ${column}) SELECT id, $2 FROM sessions WHERE id = $1
       ON CONFLICT (session_id) DO UPDATE SET ${column} = $2, changed = now()`,
      [sessionId, value],
    );
    if (rowCount === 0) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session ${sessionId}`);
  });
}

/** Bytes of one session (rows and artifacts), and whether a writer holds its lease now. */
export async function sessionState(pool: Pool, sessionId: string): Promise<{ bytes: number; live: boolean } | null> {
  return withTransaction(pool, "Reading a session's state", async (client) => {
    const { rows } = await client.query<{ bytes: number; live: boolean }>(
      `SELECT ${SIZE} AS bytes, (s.lease_holder IS NOT NULL AND s.lease_expires > clock_timestamp()) AS live
         FROM sessions s WHERE s.id = $1`,
      [sessionId],
    );
    return rows[0] ?? null;
  });
}

/** `sessionState` of many sessions in one query, by id (absent ids are left out). */
export async function sessionStates(pool: Pool, sessionIds: readonly string[]): Promise<Map<string, { bytes: number; live: boolean }>> {
  return withTransaction(pool, "Reading sessions' state", async (client) => {
    const { rows } = await client.query<{ id: string; bytes: number; live: boolean }>(
      `SELECT s.id, ${SIZE} AS bytes, (s.lease_holder IS NOT NULL AND s.lease_expires > clock_timestamp()) AS live
         FROM sessions s WHERE s.id = ANY($1::text[])`,
      [sessionIds],
    );
    return new Map(rows.map((r) => [r.id, { bytes: r.bytes, live: r.live }]));
  });
}

/**
 * Moves a session to the trash in one transaction: refused with `SESSION_LOCKED` while a writer's
 * lease is live, `SESSION_NOT_FOUND` when absent or already trashed. Returns its row.
 */
export async function trashSessionRow(pool: Pool, sessionId: string): Promise<PgLifecycleRow> {
  return withTransaction(pool, "Moving a session to the trash", async (client) => {
    const { rows } = await client.query<{ holder: string | null; live: boolean; trashed: boolean }>(
      `SELECT s.lease_holder AS holder, (s.lease_holder IS NOT NULL AND s.lease_expires > clock_timestamp()) AS live,
              (l.trashed_at IS NOT NULL) AS trashed
         FROM sessions s LEFT JOIN session_lifecycle l ON l.session_id = s.id WHERE s.id = $1 FOR UPDATE OF s`,
      [sessionId],
    );
    const row = rows[0];
    if (row === undefined || row.trashed) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session ${sessionId} outside the trash`);
    if (row.live) throw new TranscriptStoreError("SESSION_LOCKED", `Session ${sessionId} has a live writer (lease held by ${row.holder})`);
    await client.query(
      `UPDATE sessions SET lease_holder = $2, lease_token = lease_token + 1, lease_expires = $3::timestamptz WHERE id = $1`,
      [sessionId, TRASH_HOLDER, TRASH_LEASE_END],
    );
    const { rows: out } = await client.query(
      `INSERT INTO session_lifecycle AS l (session_id, trashed_at) VALUES ($1, now())
       ON CONFLICT (session_id) DO UPDATE SET trashed_at = now(), changed = now()
       RETURNING l.session_id, (SELECT cwd FROM sessions WHERE id = $1) AS cwd, l.pinned, l.archived, l.trashed_at,
                 (SELECT ${SIZE} FROM sessions s WHERE s.id = $1) AS bytes`,
      [sessionId],
    );
    return rowOf(out[0]);
  });
}

/** Takes a session out of the trash (its lease released). `SESSION_NOT_FOUND` when not trashed. */
export async function restoreSessionRow(pool: Pool, sessionId: string): Promise<void> {
  await withTransaction(pool, "Restoring a session", async (client) => {
    const { rowCount } = await client.query(
      "UPDATE session_lifecycle SET trashed_at = NULL, changed = now() WHERE session_id = $1 AND trashed_at IS NOT NULL",
      [sessionId],
    );
    if (rowCount === 0) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session ${sessionId} in the trash`);
    await client.query("UPDATE sessions SET lease_holder = NULL, lease_expires = NULL WHERE id = $1 AND lease_holder = $2", [
      sessionId,
      TRASH_HOLDER,
    ]);
  });
}

/** Deletes a trashed session's rows for good (entries, blob refs, artifacts cascade). */
export async function purgeSessionRow(pool: Pool, sessionId: string): Promise<void> {
  await withTransaction(pool, "Purging a session", async (client) => {
    const { rowCount } = await client.query(
      `DELETE FROM sessions s USING session_lifecycle l
        WHERE s.id = $1 AND l.session_id = s.id AND l.trashed_at IS NOT NULL AND s.lease_holder = $2`,
      [sessionId, TRASH_HOLDER],
    );
    if (rowCount === 0) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session ${sessionId} in the trash`);
  });
}
