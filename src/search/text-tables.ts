import type { SqliteStatement } from "./sqlite.ts";
import { stemmedText } from "./word-forms.ts";

/**
 * The index's full-text table (schema version 5, issue 34), a contentless FTS5 table keyed by
 * `entries.id` (the index keeps no copy of a text: snippets are cut from the session line read back):
 * `entries_text`, `porter` over `unicode61` (case and diacritics folded), fed the text with the parts
 * of its compound words appended (src/search/word-forms.ts). A quoted phrase's exact form is checked
 * on the text read back (src/search/exact-forms.ts): a second, unstemmed table would double the
 * index and its build (docs/index.md, "Word forms", measured).
 */
export const SEARCH_TEXT_TABLES = `
CREATE VIRTUAL TABLE IF NOT EXISTS entries_text USING fts5(
  text, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2'
);`;

/** The full-text tables, each dropped or emptied with the index. */
export const TEXT_TABLES = ["entries_text"] as const;

/**
 * FTS5's own settings, kept in the index (since schema version 3). `hashsize`: the terms FTS5 gathers
 * in memory before it writes a segment (default 1 MiB); a build then writes few large segments
 * instead of one per MiB of text, and merges them less (measured: about a quarter less CPU for a build).
 */
export const FTS_SETTINGS = TEXT_TABLES.map((t) => `INSERT INTO ${t} (${t}, rank) VALUES ('hashsize', 67108864);`).join("\n");

/** Indexes one text under `id`, with its identifier parts. */
export function insertSearchText(sql: { insertText: SqliteStatement }, id: number | bigint, text: string): void {
  sql.insertText.run(id, stemmedText(text));
}
