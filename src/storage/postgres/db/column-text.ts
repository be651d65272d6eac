import { TranscriptStoreError } from "../../../errors.ts";

/*
 * PostgreSQL `text` refuses U+0000, and a lone UTF-16 surrogate has no UTF-8 form (pg would send
 * U+FFFD in its place, silently). Lines and header lines never hold either raw: JSON escapes them
 * (`\u0000`, `\ud800`), so they are stored byte-exact. The columns derived from them (cwd, title,
 * parent, listing preview, entry id, kind) hold JS strings lifted out of the JSON, which may: those
 * pass through `columnText`, the one place that makes a string storable. A session id is the key of
 * every row and must stay exact, so an id that is not storable as it is is refused instead.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what PostgreSQL refuses
const NUL = /\u0000/g;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** ES2024's String.prototype.isWellFormed (native in Node 20; the compiler's lib is ES2023). */
const isWellFormed = (text: string) => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** `text` as a derived `text` column can hold it: each NUL and each lone surrogate becomes U+FFFD; other text is returned as it is. */
export function columnText(text: string): string;
export function columnText(text: string | null): string | null;
export function columnText(text: string | null): string | null {
  if (text === null) return null;
  const noNul = text.includes("\u0000") ? text.replace(NUL, "\ufffd") : text;
  return isWellFormed(noNul) ? noNul : noNul.replace(LONE_SURROGATE, "\ufffd");
}

/** True when PostgreSQL `text` holds `text` exactly (no NUL, no lone surrogate). */
export function isColumnText(text: string): boolean {
  return !text.includes("\u0000") && isWellFormed(text);
}

/** A session id as a key column holds it, or `BAD_HEADER` when it holds a NUL or a lone surrogate (it would not stay exact). */
export function checkedSessionId(id: string): string {
  if (isColumnText(id)) return id;
  throw new TranscriptStoreError("BAD_HEADER", `A session id holds a NUL or a lone surrogate: ${JSON.stringify(id)}`);
}
