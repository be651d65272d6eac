/**
 * Column widths as a terminal draws them: East Asian wide and fullwidth characters and emoji take
 * two cells, combining marks and zero-width characters none, everything else one. Used to fit a
 * table to the terminal; the text it measures is already terminal-safe (terminal-text.ts).
 */

/** Code point ranges (inclusive) drawn two cells wide: CJK, Hangul, fullwidth forms, emoji. */
const WIDE = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x1fa70, 0x1faff],
  [0x20000, 0x3fffd],
] as const;
/** Code point ranges drawn in no cell of their own: combining marks, zero-width spaces and joiners, variation selectors. */
const ZERO = [
  [0x0300, 0x036f],
  [0x200b, 0x200f],
  [0x20d0, 0x20ff],
  [0xfe00, 0xfe0f],
] as const;

const within = (c: number, ranges: ReadonlyArray<readonly [number, number]>) => ranges.some(([lo, hi]) => c >= lo && c <= hi);

/** Cells one code point takes on a terminal. */
function cells(ch: string): number {
  const c = ch.codePointAt(0)!;
  if (c < 0x300) return 1;
  return within(c, ZERO) ? 0 : within(c, WIDE) ? 2 : 1;
}

/** Cells `text` takes on a terminal. */
export function displayWidth(text: string): number {
  let n = 0;
  for (const ch of text) n += cells(ch);
  return n;
}

/**
 * `text` cut to at most `width` cells, whole code points only, with `…` where text was left out:
 * its end cut (`keep: "start"`, a title) or its start (`keep: "end"`, a path, whose tail tells most).
 */
export function truncateTo(text: string, width: number, keep: "start" | "end"): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return "";
  const chars = [...text];
  if (keep === "end") chars.reverse();
  let out: string[] = [];
  let used = 1; // the ellipsis
  for (const ch of chars) {
    const w = cells(ch);
    if (used + w > width) break;
    out.push(ch);
    used += w;
  }
  if (keep === "end") out = out.reverse();
  return keep === "end" ? `…${out.join("")}` : `${out.join("")}…`;
}
