import type { SessionEntry } from "../format/types.ts";
import { escapeHtml as e } from "../interchange/html-text.ts";
import { type EntryContext, entryHtml } from "../interchange/entry-html.ts";

/** One side of a comparison: a session's branch (root → leaf) and how to render its entries. */
export interface CompareSide {
  label: string;
  branch: SessionEntry[];
  ctx: EntryContext;
}

/** Rows compared at most (each side's first entries). @default 400 */
export const COMPARE_ROWS = 400;

/**
 * Two branches side by side, entry by entry: the shared prefix (same entry id on both sides, as a
 * fork copies it) is marked "same", the rest paired by position.
 */
export function compareHtml(a: CompareSide, b: CompareSide): string {
  const n = Math.min(COMPARE_ROWS, Math.max(a.branch.length, b.branch.length));
  let rows = "";
  for (let i = 0; i < n; i++) {
    const x = a.branch[i];
    const y = b.branch[i];
    const same = x !== undefined && y !== undefined && x.id === y.id;
    const cell = (entry: SessionEntry | undefined, ctx: EntryContext) => (entry === undefined ? "" : entryHtml(entry, ctx));
    rows += `<tr class="${same ? "same" : "differs"}"><td>${cell(x, a.ctx)}</td><td>${cell(y, b.ctx)}</td></tr>\n`;
  }
  return (
    `<h1>Compare</h1><table class="compare"><thead><tr><th scope="col">${e(a.label)}</th><th scope="col">${e(b.label)}</th></tr></thead>` +
    `<tbody>${rows}</tbody></table>`
  );
}

/** The compare form: two session ids (and optional leaves). */
export function compareFormHtml(a: string, b: string): string {
  return (
    '<h1>Compare</h1><form method="get" action="/compare" class="filters"><label>left session <input name="a" value="' +
    `${e(a)}" required></label><label>right session <input name="b" value="${e(b)}" required></label>` +
    '<label>left leaf <input name="aleaf"></label><label>right leaf <input name="bleaf"></label>' +
    '<button type="submit">Compare</button></form>'
  );
}
