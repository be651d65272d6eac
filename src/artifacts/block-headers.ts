/**
 * The line parsers of the `ARTIFACT` / `SUMMARY:` handoff format, which runs on model output.
 * They are written as plain scans, not backtracking regexes: a line the model padded with a
 * million spaces costs one pass over it (a lazy `(.*?)\s*$` costs a pass per character).
 * Each one accepts exactly what its regex in the comment accepts.
 */

/** Characters `.` does not match in a regex: a summary never spans them. */
const LINE_TERMINATOR = /[\n\r\u2028\u2029]/;

function isSpace(ch: string): boolean {
  // `trim` removes exactly the characters `\s` matches.
  return ch.trim().length === 0;
}

/** The rest of `line` after `keyword`: `[ \t]*(.*?)\s*$`, or null when it would not match. */
function restAfter(line: string, at: number): string | null {
  let s = at;
  while (line[s] === " " || line[s] === "\t") s++;
  const rest = line.slice(s).trimEnd();
  return LINE_TERMINATOR.test(rest) ? null : rest;
}

/** `/^\s*ARTIFACT\s*$/`: the line that opens a block. */
export function isMarkerLine(line: string): boolean {
  return line.trim() === "ARTIFACT";
}

/** `/^\s*SUMMARY:[ \t]*(.*?)\s*$/`: the summary (group 1), or null. */
export function summaryOf(line: string): string | null {
  const t = line.trimStart();
  if (!t.startsWith("SUMMARY:")) return null;
  return restAfter(t, "SUMMARY:".length);
}

/** `/^\s*ARTIFACT\s+SUMMARY:[ \t]*(.*?)\s*$/`: the summary of a one-line header, or null. */
export function inlineSummaryOf(line: string): string | null {
  const t = line.trimStart();
  if (!t.startsWith("ARTIFACT")) return null;
  let i = "ARTIFACT".length;
  if (i >= t.length || !isSpace(t[i]!)) return null;
  while (i < t.length && isSpace(t[i]!)) i++;
  if (!t.startsWith("SUMMARY:", i)) return null;
  return restAfter(t, i + "SUMMARY:".length);
}

/** `/^\s*(~{3,})/`: the length of the opening fence, or 0. */
export function fenceOpenLength(line: string): number {
  const t = line.trimStart();
  let n = 0;
  while (t[n] === "~") n++;
  return n >= 3 ? n : 0;
}

/** `/^\s*~{n,}\s*$/`: a line that closes a fence opened with `n` tildes. */
export function closesFence(line: string, n: number): boolean {
  const t = line.trim();
  if (t.length < n) return false;
  for (let i = 0; i < t.length; i++) if (t[i] !== "~") return false;
  return true;
}
