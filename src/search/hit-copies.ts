/**
 * One hit per entry (issue 34): a fork copies its source's entries with their ids and times, so one
 * entry matched in a session and in two forks of it is one hit, "also in 2 forks". Shared by both
 * backends' searches.
 */

/** What identifies an entry across its copies: its id, the role of the text, its timestamp. */
export interface CopyKey {
  sessionId: string;
  entryId: string;
  role: string;
  timestamp: string;
}

/** The hits of `rows` (in their order), a copy of an entry seen before folded into the first: its session listed in `alsoIn`. */
export function collapseCopies<R extends CopyKey>(rows: readonly R[], limit: number): (R & { alsoIn: string[] })[] {
  const kept = new Map<string, R & { alsoIn: string[] }>();
  for (const row of rows) {
    const key = `${row.entryId}\0${row.role}\0${row.timestamp}`;
    const first = kept.get(key);
    if (first !== undefined) {
      if (row.sessionId !== first.sessionId && !first.alsoIn.includes(row.sessionId)) first.alsoIn.push(row.sessionId);
      continue;
    }
    if (kept.size < limit) kept.set(key, { ...row, alsoIn: [] });
  }
  return [...kept.values()];
}

/**
 * The first `limit` hits with copies collapsed: `fetch(n)` returns what it kept of the best `n` rows
 * and how many it looked at (`fetched`: a caller may drop rows, as the file tree's index drops those
 * without a quoted phrase's exact form); while fewer than `limit` distinct entries are kept and more
 * rows may exist, twice as many are fetched (at most `max`). Copies of an entry rank alike (same
 * text, same score), so they come together.
 */
export async function distinctHits<R extends CopyKey>(
  fetch: (n: number) => { rows: R[]; fetched: number } | Promise<{ rows: R[]; fetched: number }>,
  limit: number,
  max: number = Number.MAX_SAFE_INTEGER,
): Promise<(R & { alsoIn: string[] })[]> {
  let n = Math.min(max, limit + Math.max(8, limit));
  for (;;) {
    const { rows, fetched } = await fetch(n);
    const hits = collapseCopies(rows, limit);
    if (hits.length >= limit || fetched < n || n >= max) return hits;
    n = Math.min(max, n * 2);
  }
}

/** Characters of a title shown with a hit (a first message is cut). @default 80 */
export const MAX_HIT_TITLE_CHARS = 80;

/** A session's title as a hit shows it: one line, cut at `MAX_HIT_TITLE_CHARS`. */
export function hitTitle(title: string | null | undefined): string {
  const line = (title ?? "").replace(/\s+/gu, " ").trim();
  return line.length > MAX_HIT_TITLE_CHARS ? `${line.slice(0, MAX_HIT_TITLE_CHARS - 1)}…` : line;
}
