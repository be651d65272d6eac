import { emptyRefreshReport } from "../../../search/refresh-report.ts";
import type { IndexRefreshReport } from "../../../search/index-types.ts";
import type { Pool, PoolClient } from "./pg-client.ts";
import { TranscriptStoreError } from "../../../errors.ts";
import { sqlState } from "./pg-errors.ts";
import { MIGRATION_LOCK, schemaVersion, WORD_FORMS_SCHEMA_VERSION } from "./schema.ts";
import { CURRENT_SEARCH_TABLES, SEARCH_MARK_TABLE } from "./search-tables.ts";
import { artifactHeads, artifactNumbers, withArtifactHeads } from "./search-artifacts.ts";
import { searchEntryOf, textParts } from "./search-text.ts";
import { withClient, withTransaction } from "./transaction.ts";

/*
 * The search index is filled on read, never by a write: `refreshSearchIndex` reads the entry rows
 * past each session's high-water mark (search_sessions) and inserts their text (search_entries),
 * a batch per REPEATABLE READ transaction (one snapshot: the session's generation, its last seq and
 * its rows agree), the mark moving in the same transaction as the rows. Appends take no lock the
 * index holds and touch none of its tables; a refresh killed at any point leaves the marks true.
 */

/**
 * What a refresh or rebuild did: the file tree's `IndexRefreshReport` (one declaration for both
 * indexes). Here a session's `generation` or its rows stand for a file's inode and bytes;
 * `headerBytesRead` is always 0 (a header is a column, never read to check a session).
 */
export type PgIndexRefreshReport = IndexRefreshReport & {
  /** Sessions that got rows indexed, were reset or removed: sessionsAdded + sessionsUpdated + sessionsReindexed. */
  sessionsIndexed: number;
  /** The same as sessionsRemoved (the name the PostgreSQL report had first). */
  removed: number;
};

/** How far the index is behind: the fields of `IndexStatus` (src/search/session-index.ts) but `location`, which the caller knows. */
export interface PgIndexStatus {
  fresh: boolean;
  /** Sessions behind, and sessions gone still indexed. */
  sessionsBehind: number;
  bytesBehind: number;
  sessionsIndexed: number;
  entriesIndexed: number;
  sessionsGone: number;
}

/** What the batches of one refresh did, by session. */
interface Tally {
  added: Set<string>;
  updated: Set<string>;
  reindexed: Set<string>;
  texts: number;
  malformed: number;
  largeLines: number;
  artifactBytes: number;
}

/** Advisory lock key ("tsschema" + 1) held for the length of a refresh: one refresher at a time per database. */
export const INDEX_LOCK = "8391177401511800162";

/** Bytes of the longest line indexed; a longer one (inline images, payloads) is read past. @default 16 MiB */
export const MAX_INDEXED_LINE_BYTES = 16 * 1024 * 1024;

/** Sessions whose state one batch reads. */
const SESSIONS_PER_BATCH = 200;
/** Entry rows (and their bytes) one batch reads at most (a larger single row is read alone). */
const ROWS_PER_BATCH = 1000;
const BYTES_PER_BATCH = 16 * 1024 * 1024;
/** Characters of text per insert statement (one `text[]` parameter). */
const CHARS_PER_INSERT = 4 * 1024 * 1024;

/** What a database error says about the index: a refusal to write (a read-only role, a standby) is INDEX_UNAVAILABLE. */
function unavailableIfRefused(err: unknown, doing: string): never {
  const state = sqlState(err instanceof TranscriptStoreError ? err.cause : err);
  if (state === "42501" || state === "25006") {
    throw new TranscriptStoreError("INDEX_UNAVAILABLE", `${doing}: this connection may not write the search index (${String(err)})`, {
      cause: err,
    });
  }
  throw err;
}

/** Which of the index's tables exist. */
async function tablesPresent(client: PoolClient): Promise<{ sessions: boolean; entries: boolean; gin: boolean; mark: boolean }> {
  const { rows } = await client.query<{ sessions: boolean; entries: boolean; gin: boolean; mark: boolean }>(
    `SELECT to_regclass('search_sessions') IS NOT NULL AS sessions, to_regclass('search_entries') IS NOT NULL AS entries,
            to_regclass('search_entries_doc') IS NOT NULL AS gin, to_regclass('search_mark') IS NOT NULL AS mark`,
  );
  return rows[0]!;
}

/**
 * Makes sure the index's tables exist: when one was dropped, both are created anew (empty: the next
 * refresh fills them); a dropped GIN index is recreated. `readOnly` (a `migrate: "check"` store)
 * runs no DDL: missing tables are INDEX_UNAVAILABLE. So is a schema older than the search step.
 */
export async function ensureSearchTables(pool: Pool, readOnly: boolean): Promise<void> {
  const doing = "Opening the search index";
  const state = await withClient(pool, doing, async (client) => ({
    version: await schemaVersion(client),
    ...(await tablesPresent(client)),
  }));
  if (state.version < WORD_FORMS_SCHEMA_VERSION) {
    throw new TranscriptStoreError(
      "INDEX_UNAVAILABLE",
      `The database has schema version ${state.version}; the search index needs ${WORD_FORMS_SCHEMA_VERSION}` +
        " (a writing command migrates it)",
    );
  }
  if (state.sessions && state.entries && state.gin && state.mark) return;
  if (readOnly) {
    throw new TranscriptStoreError(
      "INDEX_UNAVAILABLE",
      "The search index tables are missing and a read-only connection does not create them (a writing connection does)",
    );
  }
  // under the refresh lock, as a rebuild: a refresher elsewhere finishes before a half-dropped pair is dropped
  await withClient(pool, doing, async (client) => {
    await client.query(`SELECT pg_advisory_lock(${INDEX_LOCK})`);
    await createSearchTables(pool, false);
    await client.query(`SELECT pg_advisory_unlock(${INDEX_LOCK})`);
  }).catch((err) => unavailableIfRefused(err, doing));
}

/**
 * (Re)creates the tables under the migration lock; `fresh` drops them first (a rebuild), else only a
 * half-dropped set is dropped. The mark goes with them: a mark over tables made anew would call them fresh.
 */
async function createSearchTables(pool: Pool, fresh: boolean): Promise<void> {
  await withTransaction(pool, "Creating the search index tables", async (client) => {
    await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    const now = await tablesPresent(client);
    if (fresh || !now.sessions || !now.entries) await client.query("DROP TABLE IF EXISTS search_entries, search_sessions, search_mark");
    await client.query(CURRENT_SEARCH_TABLES);
    await client.query(SEARCH_MARK_TABLE);
  });
}

/** Drops and recreates the index tables, then fills them from every row (INDEX_UNAVAILABLE when `readOnly`). */
export async function rebuildSearchIndex(pool: Pool, readOnly: boolean): Promise<PgIndexRefreshReport> {
  await ensureSearchTables(pool, readOnly);
  if (readOnly) throw new TranscriptStoreError("INDEX_UNAVAILABLE", "A read-only connection does not rebuild the search index");
  return refreshSearchIndex(pool, true);
}

/** A session's state in one batch's snapshot. */
interface SessionState {
  id: string;
  generation: string;
  lastSeq: number;
  /** Null: not indexed yet. */
  indexedGeneration: string | null;
  indexedSeq: number;
  indexedBytes: number;
  /** The model in effect after the indexed rows. */
  model: string | null;
}

/** One row to insert into search_entries. */
interface IndexRow {
  sessionId: string;
  seq: number;
  role: string;
  entryId: string | null;
  at: string | null;
  timestamp: string | null;
  model: string | null;
  body: string;
  /** Which part of a long text (textParts): 0 for the first. */
  part: number;
}

/** Each row as the parts its text is indexed in (textParts). */
function partRows(rows: readonly IndexRow[]): IndexRow[] {
  return rows.flatMap((r) => {
    const parts = textParts(r.body);
    return parts.length === 1 ? [r] : parts.map((body, part) => ({ ...r, body, part }));
  });
}

async function insertRows(client: PoolClient, rows: readonly IndexRow[]): Promise<void> {
  let start = 0;
  while (start < rows.length) {
    let end = start;
    let chars = 0;
    while (end < rows.length && (end === start || chars + rows[end]!.body.length <= CHARS_PER_INSERT)) chars += rows[end++]!.body.length;
    const part = rows.slice(start, end);
    await client.query(
      `INSERT INTO search_entries (session_id, seq, role, entry_id, at, timestamp, model, body, part)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[], $8::text[],
                            $9::int[])`,
      [
        part.map((r) => r.sessionId),
        part.map((r) => r.seq),
        part.map((r) => r.role),
        part.map((r) => r.entryId),
        part.map((r) => r.at),
        part.map((r) => r.timestamp),
        part.map((r) => r.model),
        part.map((r) => r.body),
        part.map((r) => r.part),
      ],
    );
    start = end;
  }
}

/**
 * One batch over `ids`, in one REPEATABLE READ transaction: resets sessions rewritten (or new),
 * reads the next entry rows past their marks (bounded), inserts their text, moves the marks.
 * Returns what it read and whether work remains among `ids`.
 */
async function refreshBatch(client: PoolClient, ids: readonly string[], tally: Tally): Promise<{ bytes: number; more: boolean }> {
  const { rows: states } = await client.query<SessionState>(
    `SELECT s.id, s.generation::text AS generation, s.last_seq::float8 AS "lastSeq", i.generation::text AS "indexedGeneration",
            COALESCE(i.indexed_seq, 0)::float8 AS "indexedSeq", COALESCE(i.indexed_bytes, 0)::float8 AS "indexedBytes",
            i.model
       FROM sessions s LEFT JOIN search_sessions i ON i.session_id = s.id
      WHERE s.id = ANY($1::text[])`,
    [ids],
  );
  const reset = states.filter((s) => s.indexedGeneration !== s.generation || s.indexedSeq > s.lastSeq);
  if (reset.length > 0) {
    await client.query("DELETE FROM search_entries WHERE session_id = ANY($1::text[])", [reset.map((s) => s.id)]);
    for (const s of reset) {
      (s.indexedGeneration === null ? tally.added : tally.reindexed).add(s.id);
      s.indexedSeq = 0;
      s.indexedBytes = 0;
      s.model = null;
    }
  }
  const behind = states.filter((s) => s.indexedSeq < s.lastSeq);
  const changed = new Map<string, SessionState>(reset.map((s) => [s.id, s]));
  let rowsAdded = 0;
  let bytes = 0;
  let more = false;
  if (behind.length > 0) {
    const range = [behind.map((s) => s.id), behind.map((s) => s.indexedSeq), behind.map((s) => s.lastSeq)];
    const { rows: sizes } = await client.query<{ id: string; seq: number; bytes: number }>(
      `SELECT e.session_id AS id, e.seq::float8 AS seq, (octet_length(e.line) + 1)::float8 AS bytes
         FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS w (id, after, upto)
         JOIN entries e ON e.session_id = w.id AND e.seq > w.after AND e.seq <= w.upto
        ORDER BY e.session_id, e.seq LIMIT ${ROWS_PER_BATCH + 1}`,
      range,
    );
    // the budget counts the lines fetched (one read past is not)
    const cost = (row: { bytes: number }) => (row.bytes - 1 > MAX_INDEXED_LINE_BYTES ? 0 : row.bytes);
    let take = 0;
    let fetched = 0;
    while (take < Math.min(sizes.length, ROWS_PER_BATCH) && (take === 0 || fetched + cost(sizes[take]!) <= BYTES_PER_BATCH)) {
      fetched += cost(sizes[take]!);
      bytes += sizes[take++]!.bytes;
    }
    more = take < sizes.length;
    const through = new Map<string, number>();
    for (const row of sizes.slice(0, take)) through.set(row.id, row.seq);
    const reading = behind.filter((s) => through.has(s.id));
    // a line past MAX_INDEXED_LINE_BYTES (inline images, payloads) is read past, not fetched
    const { rows: lines } = await client.query<{ id: string; seq: number; entryId: string | null; line: string | null; bytes: number }>(
      `SELECT e.session_id AS id, e.seq::float8 AS seq, e.entry_id AS "entryId",
              CASE WHEN octet_length(e.line) <= $4 THEN e.line END AS line, (octet_length(e.line) + 1)::float8 AS bytes
         FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS w (id, after, upto)
         JOIN entries e ON e.session_id = w.id AND e.seq > w.after AND e.seq <= w.upto
        ORDER BY e.session_id, e.seq`,
      [reading.map((s) => s.id), reading.map((s) => s.indexedSeq), reading.map((s) => through.get(s.id)!), MAX_INDEXED_LINE_BYTES],
    );
    const rows: IndexRow[] = [];
    const byId = new Map(reading.map((s) => [s.id, s]));
    for (const { id, seq, entryId, line, bytes: size } of lines) {
      const state = byId.get(id)!;
      state.indexedSeq = seq;
      state.indexedBytes += size;
      changed.set(id, state);
      tally.updated.add(id);
      if (line === null) {
        tally.largeLines++;
        continue;
      }
      const entry = searchEntryOf(line, state.model);
      if (entry.model !== null) state.model = entry.model;
      if (entry.malformed) tally.malformed++;
      for (const t of entry.texts) {
        rows.push({
          sessionId: id,
          seq,
          role: t.role,
          entryId,
          at: t.at?.toISOString() ?? null,
          timestamp: t.timestamp,
          model: t.model,
          body: t.text,
          part: 0,
        });
      }
    }
    // tool results pointing to spilled outputs get them appended (each up to MAX_ARTIFACT_BYTES), read in one statement
    const wanted = new Map<string, string[]>();
    for (const r of rows) {
      if (r.role !== "toolResult") continue;
      const numbers = artifactNumbers(r.body);
      if (numbers.length > 0) wanted.set(r.sessionId, [...(wanted.get(r.sessionId) ?? []), ...numbers]);
    }
    if (wanted.size > 0) {
      const heads = await artifactHeads(client, wanted);
      const counter = { artifactBytes: 0 };
      for (const r of rows) if (r.role === "toolResult") r.body = withArtifactHeads(r.sessionId, r.body, heads, counter);
      tally.artifactBytes += counter.artifactBytes;
    }
    rowsAdded = rows.length;
    // a session with fewer rows than its last seq says (never written so) is marked at its last seq
    for (const s of behind) if (!more && s.indexedSeq < s.lastSeq && !through.has(s.id)) changed.set(s.id, { ...s, indexedSeq: s.lastSeq });
    await insertRows(client, partRows(rows));
  }
  if (changed.size > 0) {
    const list = [...changed.values()];
    await client.query(
      `INSERT INTO search_sessions (session_id, generation, indexed_seq, indexed_bytes, model)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[])
       ON CONFLICT (session_id) DO UPDATE
         SET generation = excluded.generation, indexed_seq = excluded.indexed_seq, indexed_bytes = excluded.indexed_bytes,
             model = excluded.model`,
      [
        list.map((s) => s.id),
        list.map((s) => s.generation),
        list.map((s) => s.indexedSeq),
        list.map((s) => s.indexedBytes),
        list.map((s) => s.model),
      ],
    );
  }
  tally.texts += rowsAdded;
  return { bytes, more };
}

/** Runs `fn` in a REPEATABLE READ transaction on `client` (rolled back when it throws). */
async function inSnapshot<T>(client: PoolClient, fn: () => Promise<T>): Promise<T> {
  await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
  try {
    const result = await fn();
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  }
}

/**
 * Brings the index up to date with the rows committed when it starts (`rebuild`: from empty
 * tables): removes sessions gone, re-indexes sessions rewritten, reads only the rows past each
 * mark. One refresher at a time (others wait, then find the work done); appends never wait for it.
 */
export async function refreshSearchIndex(pool: Pool, rebuild = false): Promise<PgIndexRefreshReport> {
  const doing = rebuild ? "Rebuilding the search index" : "Refreshing the search index";
  return withClient(pool, doing, async (client) => {
    const report: PgIndexRefreshReport = { ...emptyRefreshReport(), sessionsIndexed: 0, removed: 0 };
    // nothing to do: no lock taken, nothing written (a role that may only read searches a fresh index)
    if (!rebuild && (await isFresh(client))) return report;
    await client.query(`SELECT pg_advisory_lock(${INDEX_LOCK})`);
    // a rebuild drops the tables under the refresh lock: never under a refresher's batches
    if (rebuild) await createSearchTables(pool, true);
    // the mark this refresh leaves: every transaction below it has ended, so whatever it changed is
    // seen by the statements below; anything later is at or above it (docs/postgres.md, "Search index")
    const since = await indexMark(client);
    const next = (await client.query<{ xmin: string }>("SELECT txid_snapshot_xmin(txid_current_snapshot())::text AS xmin")).rows[0]!.xmin;
    report.removed = await inSnapshot(client, async () => {
      const gone = await client.query<{ session_id: string }>(
        since === null
          ? "DELETE FROM search_sessions i WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = i.session_id) RETURNING session_id"
          : `DELETE FROM search_sessions i USING (SELECT DISTINCT session_id FROM session_deletions WHERE xid >= $1::bigint) d
              WHERE i.session_id = d.session_id AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = i.session_id)
              RETURNING i.session_id`,
        since === null ? [] : [since],
      );
      if (gone.rows.length === 0) return 0;
      await client.query("DELETE FROM search_entries WHERE session_id = ANY($1::text[])", [gone.rows.map((r) => r.session_id)]);
      return gone.rows.length;
    });
    report.sessionsRemoved = report.removed;
    const { rows } = await client.query<{ id: string }>(
      `SELECT s.id FROM sessions s LEFT JOIN search_sessions i ON i.session_id = s.id
        WHERE ${since === null ? "" : "s.changed_xid >= $1::bigint AND "}
              (i.session_id IS NULL OR i.generation <> s.generation OR i.indexed_seq <> s.last_seq) ORDER BY s.id`,
      since === null ? [] : [since],
    );
    report.filesSeen = rows.length;
    const tally: Tally = {
      added: new Set(),
      updated: new Set(),
      reindexed: new Set(),
      texts: 0,
      malformed: 0,
      largeLines: 0,
      artifactBytes: 0,
    };
    for (let i = 0; i < rows.length; i += SESSIONS_PER_BATCH) {
      const ids = rows.slice(i, i + SESSIONS_PER_BATCH).map((r) => r.id);
      for (;;) {
        const step = await inSnapshot(client, () => refreshBatch(client, ids, tally));
        report.bytesRead += step.bytes;
        if (!step.more) break;
      }
    }
    for (const id of [...tally.added, ...tally.reindexed]) tally.updated.delete(id);
    report.sessionsAdded = tally.added.size;
    report.sessionsReindexed = tally.reindexed.size;
    report.sessionsUpdated = tally.updated.size;
    report.sessionsIndexed = tally.added.size + tally.reindexed.size + tally.updated.size;
    report.entriesIndexed = tally.texts;
    report.malformedLines = tally.malformed;
    report.largeLinesSkipped = tally.largeLines;
    report.artifactBytesRead = tally.artifactBytes;
    // Rows wait in the GIN index's pending list until a vacuum; a search then scans that list, and the
    // planner, counting it, may prefer a sequential scan. Moved into the index now, best effort (the
    // function needs the index's owner; a role that is not waits for autovacuum).
    if (report.entriesIndexed > 0) await client.query("SELECT gin_clean_pending_list('search_entries_doc'::regclass)").catch(() => {});
    await setIndexMark(client, next);
    await client.query(`SELECT pg_advisory_unlock(${INDEX_LOCK})`);
    return report;
  }).catch((err) => unavailableIfRefused(err, doing));
}

/**
 * The freshness check without a mark (an index made anew, or never refreshed to the end): one
 * statement, no lock. A FULL JOIN (which PostgreSQL runs only as a merge or hash join) reads each
 * table once; a count, not EXISTS, so the planner costs the whole scan rather than an early exit
 * (as two EXISTS it probed `search_sessions` once per session: 93 ms at 10,000 sessions). Its cost
 * grows with the fleet; the first refresh to complete leaves a mark and FRESH_SINCE_SQL is used.
 */
export const FRESH_SQL = `SELECT count(*) > 0 AS behind FROM sessions s FULL JOIN search_sessions i ON i.session_id = s.id
  WHERE s.id IS NULL OR i.session_id IS NULL OR i.generation <> s.generation OR i.indexed_seq <> s.last_seq`;

/**
 * The freshness check every search runs first once the index has a mark ($1): only the sessions
 * changed at or above it (an index range scan of `sessions_changed_xid`) and the sessions deleted
 * at or above it (`session_deletions_xid`) are compared with their index rows, so its cost follows
 * what changed since the last refresh, not the number of sessions (test/storage/postgres/db/search-index-fresh-plan.test.ts).
 */
export const FRESH_SINCE_SQL = `SELECT EXISTS (
    SELECT 1 FROM sessions s LEFT JOIN search_sessions i ON i.session_id = s.id
     WHERE s.changed_xid >= $1::bigint AND (i.session_id IS NULL OR i.generation <> s.generation OR i.indexed_seq <> s.last_seq)
  ) OR EXISTS (
    SELECT 1 FROM session_deletions d JOIN search_sessions i ON i.session_id = d.session_id
     WHERE d.xid >= $1::bigint AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = d.session_id)
  ) AS behind`;

/** The index's mark (null: none, every session is compared), as text (a bigint). */
async function indexMark(client: PoolClient): Promise<string | null> {
  const { rows } = await client.query<{ mark: string }>("SELECT mark::text AS mark FROM search_mark");
  return rows[0]?.mark ?? null;
}

/**
 * Leaves `mark` after a completed refresh (never moved back), and forgets the deletions below it:
 * the refresh that set it has removed them from the index.
 */
async function setIndexMark(client: PoolClient, mark: string): Promise<void> {
  await client.query(
    `INSERT INTO search_mark (mark) VALUES ($1::bigint)
     ON CONFLICT (one) DO UPDATE SET mark = greatest(search_mark.mark, excluded.mark)`,
    [mark],
  );
  await client.query("DELETE FROM session_deletions WHERE xid < $1::bigint", [mark]);
}

/** True when no session is behind its mark and none removed is still indexed (FRESH_SINCE_SQL, or FRESH_SQL without a mark). */
async function isFresh(client: PoolClient): Promise<boolean> {
  const mark = await indexMark(client);
  const { rows } = await client.query<{ behind: boolean }>(mark === null ? FRESH_SQL : FRESH_SINCE_SQL, mark === null ? [] : [mark]);
  return !rows[0]!.behind;
}

/**
 * The statement behind `searchIndexStatus`: the sessions behind (new, grown, rewritten: their
 * bytes not yet read), the sessions gone still indexed, and the index's counts. Without a mark
 * ($1) every session is compared with its index row (as FRESH_SQL does); with one, only the
 * sessions changed and deleted since it, as FRESH_SINCE_SQL does: the same answer, read through
 * `sessions_changed_xid` and `session_deletions_xid` (test/storage/postgres/db/search-index-status.test.ts).
 * The two counts of the index's own rows stay whole-table counts.
 */
export function statusStatement(mark: string | null): { sql: string; params: unknown[] } {
  const changed = mark === null ? "" : "s.changed_xid >= $1::bigint AND ";
  const gone =
    mark === null
      ? `SELECT count(*) FROM search_sessions g WHERE NOT EXISTS (SELECT 1 FROM sessions x WHERE x.id = g.session_id)`
      : `SELECT count(*) FROM search_sessions g
          WHERE g.session_id IN (SELECT d.session_id FROM session_deletions d WHERE d.xid >= $1::bigint)
            AND NOT EXISTS (SELECT 1 FROM sessions x WHERE x.id = g.session_id)`;
  const sql = `SELECT count(*)::float8 AS n,
              COALESCE(sum(s.body_bytes - CASE WHEN i.generation = s.generation AND i.indexed_seq <= s.last_seq
                                               THEN i.indexed_bytes ELSE 0 END), 0)::float8 AS bytes,
              (${gone})::float8 AS gone,
              (SELECT count(*) FROM search_sessions)::float8 AS indexed,
              (SELECT count(*) FROM search_entries WHERE part = 0)::float8 AS texts
         FROM sessions s LEFT JOIN search_sessions i ON i.session_id = s.id
        WHERE ${changed}(i.session_id IS NULL OR i.generation <> s.generation OR i.indexed_seq <> s.last_seq)`;
  return { sql, params: mark === null ? [] : [mark] };
}

/** How far the index is behind, read without writing (a missing index: every session is behind). */
export async function searchIndexStatus(pool: Pool): Promise<PgIndexStatus> {
  return withClient(pool, "Reading the search index status", async (client) => {
    const present = await tablesPresent(client);
    if (!present.sessions || !present.entries) {
      const { rows } = await client.query<{ n: number; bytes: number }>(
        "SELECT count(*)::float8 AS n, COALESCE(sum(body_bytes), 0)::float8 AS bytes FROM sessions",
      );
      const { n, bytes } = rows[0]!;
      return { fresh: false, sessionsBehind: n, bytesBehind: bytes, sessionsIndexed: 0, entriesIndexed: 0, sessionsGone: 0 };
    }
    const { sql, params } = statusStatement(present.mark ? await indexMark(client) : null);
    const { rows } = await client.query<{ n: number; bytes: number; gone: number; indexed: number; texts: number }>(sql, params);
    const { n, bytes, gone, indexed, texts } = rows[0]!;
    return {
      fresh: n + gone === 0 && present.gin,
      sessionsBehind: n,
      bytesBehind: bytes,
      sessionsIndexed: indexed - gone,
      entriesIndexed: texts,
      sessionsGone: gone,
    };
  });
}

/**
 * Indexes sessions `ids` again from their first row, at once: their index rows are deleted and
 * read anew in one transaction, under the refresh lock. For a change the index's marks do not show
 * (redact scrubbing only a session's artifacts, whose heads the index holds) and so that what
 * redact replaced is gone from `search_entries` when it returns. No index tables: nothing to do.
 */
export async function reindexSearchSessions(pool: Pool, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const doing = "Re-indexing redacted sessions";
  await withClient(pool, doing, async (client) => {
    const present = await tablesPresent(client);
    if (!present.sessions || !present.entries) return;
    await client.query(`SELECT pg_advisory_lock(${INDEX_LOCK})`);
    try {
      const tally: Tally = {
        added: new Set(),
        updated: new Set(),
        reindexed: new Set(),
        texts: 0,
        malformed: 0,
        largeLines: 0,
        artifactBytes: 0,
      };
      for (let i = 0; i < ids.length; i += SESSIONS_PER_BATCH) {
        const batch = ids.slice(i, i + SESSIONS_PER_BATCH);
        // one transaction: a crash leaves the sessions' old rows or all of their new ones, never a part
        await inSnapshot(client, async () => {
          await client.query("DELETE FROM search_entries WHERE session_id = ANY($1::text[])", [batch]);
          await client.query("DELETE FROM search_sessions WHERE session_id = ANY($1::text[])", [batch]);
          while ((await refreshBatch(client, batch, tally)).more);
        });
      }
    } finally {
      await client.query(`SELECT pg_advisory_unlock(${INDEX_LOCK})`);
    }
  }).catch((err) => unavailableIfRefused(err, doing));
}
