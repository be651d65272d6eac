import type { Pool } from "./pg-client.ts";
import { MAX_CANDIDATES, SessionAmbiguousError, TranscriptStoreError } from "../../../errors.ts";
import { columnText, isColumnText } from "./column-text.ts";
import { type EntryRow, INFO_COLUMNS, type SessionRow, toEntry, toInfo, toSession } from "./rows.ts";
import { withClient, withTransaction } from "./transaction.ts";
import type { PgEntry, PgSession, PgSessionInfo } from "./types.ts";

/** Rows fetched per cursor round trip when reading a session. @default 1000 */
export const DEFAULT_READ_BATCH = 1000;

/** Options of `readSession`. */
export interface PgReadOptions {
  /** First seq to read. @default 1 */
  fromSeq?: number;
  /** Last seq to read (inclusive). @default the last */
  toSeq?: number;
  /** Rows per fetch. @default 1000 */
  batchRows?: number;
}

/** The session's row with its header line, or null when there is none. */
export async function getSession(pool: Pool, sessionId: string): Promise<PgSession | null> {
  const { rows } = await withClient(pool, "Reading a session", (client) =>
    client.query<SessionRow & { header: string }>(`SELECT ${INFO_COLUMNS}, header FROM sessions WHERE id = $1`, [sessionId]),
  );
  return rows[0] === undefined ? null : toSession(rows[0]);
}

/**
 * Streams a session's entries in seq order through a server-side cursor, `batchRows` at a time,
 * from one consistent snapshot (REPEATABLE READ, read only) that also gives the header: memory holds
 * one batch, not the session. `onBatch` may be async (the next fetch waits for it).
 * `SESSION_NOT_FOUND` when there is no such session.
 */
export async function readSession(
  pool: Pool,
  sessionId: string,
  onBatch: (entries: PgEntry[]) => void | Promise<void>,
  options: PgReadOptions = {},
): Promise<PgSession> {
  const batchRows = options.batchRows ?? DEFAULT_READ_BATCH;
  return withTransaction(
    pool,
    "Reading a session",
    async (client) => {
      await client.query("SET TRANSACTION READ ONLY");
      const { rows } = await client.query<SessionRow & { header: string }>(`SELECT ${INFO_COLUMNS}, header FROM sessions WHERE id = $1`, [
        sessionId,
      ]);
      if (rows[0] === undefined) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session ${sessionId}`);
      await client.query(
        `DECLARE ts_entries NO SCROLL CURSOR FOR
         SELECT seq::float8 AS seq, entry_id, kind, line FROM entries
          WHERE session_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq`,
        [sessionId, options.fromSeq ?? 1, options.toSeq ?? Number.MAX_SAFE_INTEGER],
      );
      for (;;) {
        const batch = await client.query<EntryRow>(`FETCH ${Math.max(1, Math.floor(batchRows))} FROM ts_entries`);
        if (batch.rows.length === 0) break;
        await onBatch(batch.rows.map(toEntry));
      }
      return toSession(rows[0]);
    },
    "REPEATABLE READ",
  );
}

/** The header and every entry of a session in memory (`readSession` collected); `SESSION_NOT_FOUND` without it. */
export async function loadSession(pool: Pool, sessionId: string): Promise<{ session: PgSession; entries: PgEntry[] }> {
  const entries: PgEntry[] = [];
  const session = await readSession(pool, sessionId, (batch) => {
    for (const entry of batch) entries.push(entry);
  });
  return { session, entries };
}

/** Options of `listSessions`. */
export interface PgListOptions {
  /** Only sessions of this cwd (exact). @default all */
  cwd?: string;
  /** At most this many. @default all */
  limit?: number;
}

/** Sessions newest first (by modification, then id), from the indexes on (cwd, modified) and (modified). */
export async function listSessions(pool: Pool, options: PgListOptions = {}): Promise<PgSessionInfo[]> {
  const limit = options.limit === undefined ? null : Math.max(0, Math.floor(options.limit));
  // md5(cwd) is the listing index's key (schema step 4: a long cwd passes a btree key's size)
  const where = options.cwd === undefined ? "" : "WHERE md5(cwd) = md5($2) AND cwd = $2";
  const params: unknown[] = options.cwd === undefined ? [limit] : [limit, columnText(options.cwd)];
  const { rows } = await withClient(pool, "Listing sessions", (client) =>
    client.query<SessionRow>(`SELECT ${INFO_COLUMNS} FROM sessions ${where} ORDER BY modified DESC, id DESC LIMIT $1`, params),
  );
  // the column holds cwds mapped by columnText: one that differs from the asked cwd only where it maps is another cwd
  return rows.map(toInfo).filter((info) => options.cwd === undefined || info.cwd === options.cwd);
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The one session whose id is `idOrPrefix` or starts with it (an exact id wins), optionally only
 * in `cwd`: `SESSION_NOT_FOUND` when none, `SESSION_AMBIGUOUS` when several. Uses the
 * `text_pattern_ops` index on the id.
 */
export async function resolveSession(pool: Pool, idOrPrefix: string, options: { cwd?: string } = {}): Promise<PgSessionInfo> {
  if (idOrPrefix === "") throw new TranscriptStoreError("SESSION_NOT_FOUND", "An empty session id matches nothing");
  // ids are stored exactly (column-text.ts): one with a NUL or a lone surrogate cannot exist
  if (!isColumnText(idOrPrefix)) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session matches ${JSON.stringify(idOrPrefix)}`);
  const { rows } = await withClient(pool, "Resolving a session", (client) =>
    client.query<SessionRow>(
      `SELECT ${INFO_COLUMNS} FROM sessions
        WHERE id LIKE $1 || '%' AND ($2::text IS NULL OR cwd = $2)
        ORDER BY (id = $3) DESC, id LIMIT ${MAX_CANDIDATES + 1}`,
      [escapeLike(idOrPrefix), options.cwd === undefined ? null : columnText(options.cwd), idOrPrefix],
    ),
  );
  const found = rows.filter((row) => options.cwd === undefined || toInfo(row).cwd === options.cwd);
  const [first, second] = found;
  if (first === undefined) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session matches ${idOrPrefix}`);
  if (second !== undefined && first.id !== idOrPrefix) {
    const infos = found.map(toInfo).sort((a, b) => b.modified.getTime() - a.modified.getTime());
    const candidates = infos.map((i) => ({ id: i.id, title: i.title ?? i.sessionName ?? i.firstMessage, modified: i.modified }));
    throw new SessionAmbiguousError(idOrPrefix, candidates, rows.length > MAX_CANDIDATES);
  }
  return toInfo(first);
}
