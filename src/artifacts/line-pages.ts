import { TranscriptStoreError } from "../errors.ts";

/** 1-based line pagination of `read` (docs/artifacts.md, Reading in pages). */
export interface LinePageOptions {
  /** First line to return, counting from 1. @default 1 */
  offset?: number;
  /** Most lines to return. @default all remaining lines */
  limit?: number;
}

/** One page of a text. Concatenating every page in order gives the text back byte for byte. */
export interface LinePage {
  /** The lines, each with its own line break (the last line of a text may have none). */
  content: string;
  /** The first line returned (1-based); `offset` as asked, even past the end. */
  offset: number;
  /** Number of lines in `content`. */
  lineCount: number;
  /** Lines in the whole text (a trailing line break does not open an extra line). */
  totalLines: number;
  /** True when lines follow this page. */
  hasMore: boolean;
}

/** Checks pagination options once; a bad value is `INVALID_OPTION` naming it. */
export function validatePageOptions(options: LinePageOptions): { offset: number; limit: number } {
  const { offset = 1, limit } = options;
  if (!Number.isSafeInteger(offset) || offset < 1)
    throw new TranscriptStoreError("INVALID_OPTION", `offset must be an integer >= 1, got: ${String(offset)}`);
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1))
    throw new TranscriptStoreError("INVALID_OPTION", `limit must be an integer >= 1, got: ${String(limit)}`);
  return { offset, limit: limit ?? Number.POSITIVE_INFINITY };
}

/** Cuts a page of lines out of `text` without copying more than the page. */
export function pageLines(text: string, options: LinePageOptions = {}): LinePage {
  const { offset, limit } = validatePageOptions(options);
  let line = 1;
  let start = offset === 1 ? 0 : -1;
  let end = -1;
  let pos = 0;
  // One pass over the line breaks: note where the page starts and ends, keep counting for the total.
  for (;;) {
    const nl = text.indexOf("\n", pos);
    if (nl === -1) break;
    pos = nl + 1;
    if (line === offset + limit - 1 && end === -1) end = pos;
    line++;
    if (line === offset && start === -1) start = pos;
  }
  const totalLines = pos < text.length ? line : line - 1;
  if (start === -1 || offset > totalLines) return { content: "", offset, lineCount: 0, totalLines, hasMore: false };
  const stop = end === -1 ? text.length : end;
  const lastLine = Math.min(totalLines, offset + limit - 1);
  return { content: text.slice(start, stop), offset, lineCount: lastLine - offset + 1, totalLines, hasMore: lastLine < totalLines };
}
