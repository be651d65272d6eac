import type { Pool, PoolClient } from "./pg-client.ts";
import { TranscriptStoreError } from "../../../errors.ts";
import { SEARCH_MARK_TABLE, SEARCH_TABLES, WORD_FORMS_STEP } from "./search-tables.ts";
import { withClient, withTransaction } from "./transaction.ts";

/**
 * The search index step (issue 24): a session's `generation` is the id of the transaction that
 * created its row or last rewrote it (rows no longer an extension of those indexed): txid_current()
 * needs no privilege, where a sequence would need one granted to every writing role. The index
 * tables (search-tables.ts) are derived from `entries` and filled on read, never by a write.
 */
const SEARCH_STEP = `
  ALTER TABLE sessions ADD COLUMN generation bigint NOT NULL DEFAULT txid_current();
  ${SEARCH_TABLES}
  `;

/**
 * The change-mark step (issue 27): the search index's freshness check and refresh read only the
 * sessions changed since the index's mark, not every session. Every write of a session row that
 * moves what the index compares (a new row, `last_seq`, `generation`) stamps `changed_xid` with the
 * writing transaction's id, by trigger, so no write path can forget it; a deleted row leaves its id
 * in `session_deletions` (one row per session, by one statement-level trigger). A refresh sets its
 * mark to the oldest transaction still running when it started (`txid_snapshot_xmin`): a change
 * below that mark committed before the refresh looked, so only changes at or above it are read
 * again. Neither trigger touches an index table: an append never waits on the index.
 */
const CHANGE_MARK_STEP = `
  ALTER TABLE sessions ADD COLUMN changed_xid bigint NOT NULL DEFAULT 0;
  CREATE INDEX sessions_changed_xid ON sessions (changed_xid);
  CREATE TABLE session_deletions (
    session_id text NOT NULL,
    xid        bigint NOT NULL DEFAULT txid_current()
  );
  CREATE INDEX session_deletions_xid ON session_deletions (xid);
  CREATE FUNCTION ts_session_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN NEW.changed_xid := txid_current(); RETURN NEW; END $$;
  CREATE TRIGGER sessions_changed_insert BEFORE INSERT ON sessions FOR EACH ROW EXECUTE FUNCTION ts_session_changed();
  CREATE TRIGGER sessions_changed_update BEFORE UPDATE ON sessions FOR EACH ROW
    WHEN (OLD.last_seq IS DISTINCT FROM NEW.last_seq OR OLD.generation IS DISTINCT FROM NEW.generation)
    EXECUTE FUNCTION ts_session_changed();
  CREATE FUNCTION ts_sessions_deleted() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN INSERT INTO session_deletions (session_id) SELECT id FROM gone; RETURN NULL; END $$;
  CREATE TRIGGER sessions_deleted AFTER DELETE ON sessions REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION ts_sessions_deleted();
  ${SEARCH_MARK_TABLE}
  `;

/**
 * The schema, as numbered steps: step N takes a database at version N-1 to N. A step is never
 * edited once released; a change is a new step. docs/postgres.md describes the tables.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE sessions (
    id                text PRIMARY KEY,
    cwd               text NOT NULL,
    created           timestamptz NOT NULL,
    modified          timestamptz NOT NULL DEFAULT now(),
    header            text NOT NULL,
    parent_session    text,
    title             text,
    first_message     text,
    first_message_seq bigint,
    message_count     bigint NOT NULL DEFAULT 0,
    last_seq          bigint NOT NULL DEFAULT 0,
    lease_holder      text,
    lease_token       bigint NOT NULL DEFAULT 0,
    lease_expires     timestamptz
  );
  CREATE INDEX sessions_cwd_modified ON sessions (cwd, modified DESC, id DESC);
  CREATE INDEX sessions_modified ON sessions (modified DESC, id DESC);
  CREATE INDEX sessions_id_prefix ON sessions (id text_pattern_ops);

  CREATE TABLE entries (
    session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq        bigint NOT NULL CHECK (seq > 0),
    entry_id   text,
    kind       text,
    line       text NOT NULL,
    PRIMARY KEY (session_id, seq)
  );

  CREATE TABLE blobs (
    sha256  text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    bytes   bytea NOT NULL,
    size    bigint NOT NULL,
    touched timestamptz NOT NULL DEFAULT now()
  );

  CREATE TABLE blob_refs (
    session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    sha256     text NOT NULL REFERENCES blobs (sha256),
    PRIMARY KEY (session_id, sha256)
  );
  CREATE INDEX blob_refs_sha256 ON blob_refs (sha256);

  CREATE TABLE artifacts (
    session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    id         text NOT NULL,
    meta       jsonb NOT NULL DEFAULT '{}',
    content    bytea NOT NULL,
    created    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, id)
  );
  `,
  // Step 2 (artifact chunks, issue 20): an artifact's content leaves its row for `artifact_chunks`,
  // at most 1 MiB a row (the library's default chunk), so no value read back is ever one string
  // too long for V8 (a bytea of ~256 MiB is). Existing contents are cut server-side.
  `
  CREATE TABLE artifact_chunks (
    session_id text NOT NULL,
    id         text NOT NULL,
    n          int NOT NULL CHECK (n >= 0),
    bytes      bytea NOT NULL,
    PRIMARY KEY (session_id, id, n),
    FOREIGN KEY (session_id, id) REFERENCES artifacts (session_id, id) ON DELETE CASCADE
  );
  ALTER TABLE artifacts ADD COLUMN size bigint NOT NULL DEFAULT 0;
  INSERT INTO artifact_chunks (session_id, id, n, bytes)
    SELECT a.session_id, a.id, g.n, substring(a.content FROM g.n * 1048576 + 1 FOR 1048576)
      FROM artifacts a, generate_series(0, (octet_length(a.content) - 1) / 1048576) AS g (n)
     WHERE octet_length(a.content) > 0;
  UPDATE artifacts SET size = octet_length(content);
  ALTER TABLE artifacts DROP COLUMN content;
  `,
  // Step 3: the header line the last import brought (the base that tells which side moved on a re-import)
  "ALTER TABLE sessions ADD COLUMN imported_header text;",
  // Step 4: the listing index keys a cwd by its md5, not its text: a btree key holds ~2,700 bytes,
  // so a long cwd (one a file tree stores) made every create and move of its session fail.
  `
  DROP INDEX sessions_cwd_modified;
  CREATE INDEX sessions_cwd_modified ON sessions (md5(cwd), modified DESC, id DESC);
  `,
  // Step 5 (issue 22): the bytes of a session's entry lines, each with its newline, kept with its
  // row so that listing reports a real size (plus the header's) without reading any entry.
  `
  ALTER TABLE sessions ADD COLUMN body_bytes bigint NOT NULL DEFAULT 0;
  UPDATE sessions s SET body_bytes = e.bytes
    FROM (SELECT session_id, sum(octet_length(line) + 1) AS bytes FROM entries GROUP BY session_id) e
   WHERE s.id = e.session_id;
  `,
  // Step 6 (issue 22): pi's session name is the latest `session_info` entry; listing reads that one
  // line per session through this partial index (no column to keep: every write path and every
  // existing row lists it, whatever wrote the entries).
  "CREATE INDEX entries_session_info ON entries (session_id, seq DESC) WHERE kind = 'session_info';",
  // Step 7 (issue 24, usage ledger): the usage rows of deleted sessions, recorded before a purge, so
  // cost history outlives the session. No foreign key: the session row is gone when these count.
  `
  CREATE TABLE usage_ledger (
    session_id text NOT NULL,
    entry_key  text NOT NULL,
    ts         timestamptz,
    row        jsonb NOT NULL,
    deleted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, entry_key)
  );
  CREATE INDEX usage_ledger_ts ON usage_ledger (ts);
  `,
  // Step 8 (issue 24, lifecycle): pins, archive and trash are facts of their own (no index derives
  // them). A trashed session keeps its rows (and so its blobs) until purged; its lease is held by the trash.
  `
  CREATE TABLE session_lifecycle (
    session_id text PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    pinned     boolean NOT NULL DEFAULT false,
    archived   boolean NOT NULL DEFAULT false,
    trashed_at timestamptz,
    changed    timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX session_lifecycle_trashed ON session_lifecycle (trashed_at) WHERE trashed_at IS NOT NULL;
  `,
  // Step 9 (issue 24): the search index (SEARCH_STEP below).
  SEARCH_STEP,
  // Step 10 (issue 26): the store's one redaction key (redaction-key.ts), so every writer of the database
  // makes the same markers. One row, inserted once by the first writer that needs it, never replaced.
  `
  CREATE TABLE redaction_key (
    id      int PRIMARY KEY CHECK (id = 1),
    key     bytea NOT NULL CHECK (octet_length(key) = 32),
    created timestamptz NOT NULL DEFAULT now()
  );
  `,
  // Step 11 (issue 27): change marks for the search index (CHANGE_MARK_STEP above).
  CHANGE_MARK_STEP,
  // Step 12 (issue 34): word forms and identifier parts in the search index (search-tables.ts, WORD_FORMS_STEP).
  WORD_FORMS_STEP,
];

/** The schema version that brings the search index (its position above; it follows whatever step came before it). */
export const SEARCH_SCHEMA_VERSION = MIGRATIONS.indexOf(SEARCH_STEP) + 1;

/** The schema version that brings the change marks the search index reads (CHANGE_MARK_STEP). */
export const SEARCH_MARK_SCHEMA_VERSION = MIGRATIONS.indexOf(CHANGE_MARK_STEP) + 1;

/** The schema version that brings word forms to the search index (WORD_FORMS_STEP): what the index reads needs it. */
export const WORD_FORMS_SCHEMA_VERSION = MIGRATIONS.indexOf(WORD_FORMS_STEP) + 1;

/** The schema version this library writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Advisory lock key ("tsschema" in ASCII) that serializes migrations across processes. */
export const MIGRATION_LOCK = "8391177401511800161";

/** The schema version recorded in the database (0 when it has none yet). */
export async function schemaVersion(client: PoolClient): Promise<number> {
  const table = await client.query<{ present: boolean }>("SELECT to_regclass('ts_schema_version') IS NOT NULL AS present");
  if (!table.rows[0]!.present) return 0;
  const { rows } = await client.query<{ version: number | null }>("SELECT max(version) AS version FROM ts_schema_version");
  return rows[0]!.version ?? 0;
}

/** A PostgreSQL schema name the store accepts: lowercase letters, digits and `_`, not starting with a digit or `pg_`. */
const SCHEMA_NAME = /^(?!pg_)[a-z_][a-z0-9_]{0,62}$/;

/** `name` checked as a schema name (INVALID_OPTION otherwise). */
export function checkSchemaName(name: unknown): string {
  if (typeof name !== "string" || !SCHEMA_NAME.test(name)) {
    throw new TranscriptStoreError(
      "INVALID_OPTION",
      `schema must be 1 to 63 lowercase letters, digits or _, not starting with a digit or pg_ (got ${JSON.stringify(name)})`,
    );
  }
  return name;
}

/** `name` as a quoted SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Checks, without changing anything, that the database holds this library's schema version: for a
 * read-only connection (`migrate: "check"`), which must not create tables. SCHEMA_MISMATCH otherwise.
 */
export async function checkSchema(pool: Pool): Promise<void> {
  const found = await withClient(pool, "Reading the PostgreSQL schema version", (client) => schemaVersion(client));
  if (found === SCHEMA_VERSION) return;
  const why =
    found === 0
      ? "has no transcript-store schema (nothing was ever written to it; a writing command such as import or migrate --to creates it)"
      : found < SCHEMA_VERSION
        ? `has schema version ${found}, older than this library's ${SCHEMA_VERSION} (a writing command migrates it)`
        : `has schema version ${found}; this library knows up to ${SCHEMA_VERSION}: upgrade transcript-store`;
  throw new TranscriptStoreError("SCHEMA_MISMATCH", `The database ${why}; a read-only connection does not change it`);
}

/**
 * Creates or migrates the schema to `SCHEMA_VERSION`, idempotently: one transaction under a
 * transaction-scoped advisory lock, so processes migrating at once apply each step exactly once
 * (the second waits, then finds the work done). A database newer than this library is refused.
 * Returns the version found before. `upTo` stops at an earlier version (tests build old databases).
 * `schema` (a PostgreSQL schema the pool's `search_path` names) is created first if absent.
 */
export async function migrateSchema(pool: Pool, upTo: number = SCHEMA_VERSION, schema?: string): Promise<number> {
  return withTransaction(pool, "Migrating the PostgreSQL schema", async (client) => {
    await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    // DDL only for what is absent (under the lock: two processes creating it at once would collide),
    // so that a role without CREATE privilege connects to an up-to-date database
    if (schema !== undefined && (await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])).rowCount === 0) {
      await client.query(`CREATE SCHEMA ${quoteIdent(schema)}`);
    }
    if (!(await client.query<{ present: boolean }>("SELECT to_regclass('ts_schema_version') IS NOT NULL AS present")).rows[0]!.present) {
      await client.query("CREATE TABLE ts_schema_version (version int PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())");
    }
    const found = await schemaVersion(client);
    if (found > SCHEMA_VERSION) {
      throw new TranscriptStoreError(
        "PERSISTENCE_FAILED",
        `The database has schema version ${found}; this library knows up to ${SCHEMA_VERSION}: upgrade transcript-store`,
      );
    }
    for (let version = found + 1; version <= Math.min(upTo, SCHEMA_VERSION); version++) {
      await client.query(MIGRATIONS[version - 1]!);
      await client.query("INSERT INTO ts_schema_version (version) VALUES ($1)", [version]);
    }
    return found;
  });
}
