/**
 * The tables of the search index (docs/postgres.md, "Search index"): derived from `entries`, never
 * the source of truth. The search step of schema.ts creates them; the index recreates them with this same text
 * when they were dropped (every statement is `IF NOT EXISTS`). Frozen like a schema step: a change
 * is a new step.
 *
 * `search_sessions` holds one row per indexed session: its `generation` when indexed (a rewrite
 * gives the session a new one), the high-water mark (`indexed_seq`, `indexed_bytes`: the entry
 * rows read so far and their bytes, counted as `sessions.body_bytes` counts them) and the model in
 * effect after them (the next rows' `model` continues from it).
 * `search_entries` holds the searchable text of an entry, one row per role it holds text for
 * (an assistant message's text and its thinking are two rows), with a `simple` tsvector under GIN.
 * Neither references `sessions`: a delete or an append never touches them (a refresh removes the
 * rows of sessions gone).
 */
export const SEARCH_TABLES = `
  CREATE TABLE IF NOT EXISTS search_sessions (
    session_id    text PRIMARY KEY,
    generation    bigint NOT NULL,
    indexed_seq   bigint NOT NULL DEFAULT 0,
    indexed_bytes bigint NOT NULL DEFAULT 0,
    model         text
  );
  CREATE TABLE IF NOT EXISTS search_entries (
    session_id text NOT NULL,
    seq        bigint NOT NULL,
    role       text NOT NULL,
    entry_id   text,
    at         timestamptz,
    timestamp  text,
    model      text,
    body       text NOT NULL,
    doc        tsvector NOT NULL GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, body)) STORED,
    PRIMARY KEY (session_id, seq, role)
  );
  CREATE INDEX IF NOT EXISTS search_entries_doc ON search_entries USING gin (doc);
`;

/**
 * The index's change mark (docs/postgres.md, "Search index"): one row, `mark`, written by a refresh
 * that completed: every session change (sessions.changed_xid, session_deletions.xid) by a
 * transaction below it is in the index. Part of the index: dropped and recreated with its tables
 * (recreated empty: no mark, so the next check and refresh read every session once). Frozen like
 * SEARCH_TABLES: a change is a new step.
 */
export const SEARCH_MARK_TABLE = `
  CREATE TABLE IF NOT EXISTS search_mark (
    one  boolean PRIMARY KEY DEFAULT true CHECK (one),
    mark bigint NOT NULL
  );
`;

/** The relations the index needs, each checked with `to_regclass` before use. */
export const SEARCH_RELATIONS = ["search_sessions", "search_entries", "search_entries_doc", "search_mark"] as const;

/**
 * The parts of the compound words of a text, as the file tree's index splits them
 * (src/search/word-forms.ts): `parseStatement` → `parse Statement`, `HTTPServer` → `HTTP Server`.
 * IMMUTABLE, so a generated column may call it. Created by the word-forms step; frozen like it.
 */
export const IDENTIFIER_PARTS_FUNCTION = `
  CREATE OR REPLACE FUNCTION ts_identifier_parts(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT regexp_replace(regexp_replace(t, '([[:lower:][:digit:]])([[:upper:]])', '\\1 \\2', 'g'),
                          '([[:upper:]])([[:upper:]][[:lower:]])', '\\1 \\2', 'g')
  $$;
`;

/**
 * The text search configuration of the index since the word-forms step (issue 34): PostgreSQL's
 * `english` with its words stemmed by the Snowball English stemmer and no stop word dropped (as the
 * file tree's FTS5 `porter`, which drops none: "the" and "it's" stay searchable).
 */
export const WORDS_CONFIG = `
  CREATE TEXT SEARCH DICTIONARY ts_words_stem (TEMPLATE = snowball, Language = english);
  CREATE TEXT SEARCH CONFIGURATION ts_words (COPY = english);
  ALTER TEXT SEARCH CONFIGURATION ts_words
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH ts_words_stem;
`;

/**
 * The searchable words of a row since the word-forms step: `ts_words` over the text with its
 * compound words split. Frozen: a change is a new step.
 */
export const WORD_FORMS_DOC = "to_tsvector('ts_words'::regconfig, ts_identifier_parts(body))";

/**
 * The word-forms step: the function and the configuration, then `doc` and its GIN index made anew
 * over them (the table is rewritten once); and `part`: a long text is indexed whole, as several rows
 * (search-text.ts, textParts), the first part 0.
 */
export const WORD_FORMS_STEP = `
  ${IDENTIFIER_PARTS_FUNCTION}
  ${WORDS_CONFIG}
  DROP INDEX IF EXISTS search_entries_doc;
  ALTER TABLE search_entries DROP COLUMN doc;
  ALTER TABLE search_entries ADD COLUMN doc tsvector NOT NULL GENERATED ALWAYS AS (${WORD_FORMS_DOC}) STORED;
  CREATE INDEX search_entries_doc ON search_entries USING gin (doc);
  ALTER TABLE search_entries ADD COLUMN part int NOT NULL DEFAULT 0;
  ALTER TABLE search_entries DROP CONSTRAINT search_entries_pkey;
  ALTER TABLE search_entries ADD PRIMARY KEY (session_id, seq, role, part);
`;

/**
 * The index tables as the current schema has them (SEARCH_TABLES after WORD_FORMS_STEP): what a
 * dropped set is created anew from. The function and configuration stay from the step.
 */
export const CURRENT_SEARCH_TABLES = `
  CREATE TABLE IF NOT EXISTS search_sessions (
    session_id    text PRIMARY KEY,
    generation    bigint NOT NULL,
    indexed_seq   bigint NOT NULL DEFAULT 0,
    indexed_bytes bigint NOT NULL DEFAULT 0,
    model         text
  );
  CREATE TABLE IF NOT EXISTS search_entries (
    session_id text NOT NULL,
    seq        bigint NOT NULL,
    role       text NOT NULL,
    entry_id   text,
    at         timestamptz,
    timestamp  text,
    model      text,
    body       text NOT NULL,
    doc        tsvector NOT NULL GENERATED ALWAYS AS (${WORD_FORMS_DOC}) STORED,
    part       int NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, seq, role, part)
  );
  CREATE INDEX IF NOT EXISTS search_entries_doc ON search_entries USING gin (doc);
`;
