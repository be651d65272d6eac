import type { SqliteStatement } from "./sqlite.ts";
import { stemmedText } from "./word-forms.ts";

/**
 * The index's full-text tables (schema version 5, issue 34), both contentless FTS5 tables keyed by
 * `entries.id` (the index keeps no copy of a text: snippets are cut from the session line read back):
 *
 * - `entries_text`: `porter` over `unicode61` (case and diacritics folded), fed the text with the parts
 *   of its compound words appended (src/index/word-forms.ts): every unquoted query term, inflected.
 * - `entries_exact`: `unicode61` alone, fed the text as written: a quoted phrase must also match here,
 *   so it keeps its exact form (`"crashes"` finds no "crash").
 *
 * docs/index.md ("Word forms") gives what each costs in build time and size.
 */
export const SEARCH_TEXT_TABLES = `
CREATE VIRTUAL TABLE IF NOT EXISTS entries_text USING fts5(
  text, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS entries_exact USING fts5(
  text, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);`;

/** The full-text tables, each dropped or emptied with the index. */
export const TEXT_TABLES = ["entries_text", "entries_exact"] as const;

/**
 * FTS5's own settings, kept in the index (since schema version 3). `hashsize`: the terms FTS5 gathers
 * in memory before it writes a segment (default 1 MiB); a build then writes few large segments
 * instead of one per MiB of text, and merges them less (measured: about a quarter less CPU for a build).
 */
export const FTS_SETTINGS = TEXT_TABLES.map((t) => `INSERT INTO ${t} (${t}, rank) VALUES ('hashsize', 67108864);`).join("\n");

/** Indexes one text under `id` in both tables: as written in the exact one, with its identifier parts in the stemmed one. */
export function insertSearchText(
  sql: { insertText: SqliteStatement; insertExact: SqliteStatement },
  id: number | bigint,
  text: string,
): void {
  sql.insertText.run(id, stemmedText(text));
  sql.insertExact.run(id, text);
}
