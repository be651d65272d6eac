import { io } from "../io.ts";
import { validatePageOptions, type LinePage, type LinePageOptions } from "./line-pages.ts";

/** Bytes read at a time while paging a file. */
export const PAGE_CHUNK_BYTES = 1 << 16;

const NEWLINE = 0x0a;

/**
 * `pageLines` over an open file instead of a string: the file is read in fixed chunks, line
 * breaks are counted as they pass, and only the bytes of the requested page are kept. Memory is
 * bounded by the page and one chunk, never by the file (a page of a 500 MB log costs a page).
 * A page starts and ends at a `\n` byte, which never occurs inside a UTF-8 sequence, so decoding
 * the page alone gives exactly the characters the whole text would.
 */
export function pageFile(fd: number, options: LinePageOptions = {}, chunkBytes = PAGE_CHUNK_BYTES): LinePage {
  const { offset, limit } = validatePageOptions(options);
  const buf = Buffer.allocUnsafe(chunkBytes);
  const parts: Buffer[] = [];
  let keptBytes = 0;
  let line = 1;
  let start = offset === 1 ? 0 : -1;
  let end = -1;
  let afterLastBreak = 0;
  let size = 0;
  for (;;) {
    const n = io.readSync(fd, buf, 0, chunkBytes, size);
    if (n <= 0) break;
    const base = size;
    size += n;
    const chunk = n === chunkBytes ? buf : buf.subarray(0, n);
    for (let i = chunk.indexOf(NEWLINE); i !== -1; i = chunk.indexOf(NEWLINE, i + 1)) {
      afterLastBreak = base + i + 1;
      if (line === offset + limit - 1 && end === -1) end = afterLastBreak;
      line++;
      if (line === offset && start === -1) start = afterLastBreak;
    }
    // Keep the part of this chunk that lies inside the page (its bounds are known up to here).
    if (start !== -1 && start < size) {
      const from = Math.max(start, base) - base;
      const to = (end === -1 ? size : Math.min(end, size)) - base;
      if (to > from) {
        parts.push(Buffer.from(chunk.subarray(from, to)));
        keptBytes += to - from;
      }
    }
  }
  const totalLines = afterLastBreak < size ? line : line - 1;
  if (start === -1 || offset > totalLines) return { content: "", offset, lineCount: 0, totalLines, hasMore: false };
  const lastLine = Math.min(totalLines, offset + limit - 1);
  const content = Buffer.concat(parts, keptBytes).toString("utf8");
  return { content, offset, lineCount: lastLine - offset + 1, totalLines, hasMore: lastLine < totalLines };
}
