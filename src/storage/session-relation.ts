/**
 * The one rule that decides how a session brought from elsewhere (an import, a migration, a copy
 * between stores) relates to the copy of the same session a store holds already. Both are given
 * as line sequences: the header line first, then the entry lines, each compared as exact bytes.
 * - `same`: identical header and entry lines;
 * - `storeAhead`: the store copy holds every line of the incoming one and more (it was continued,
 *   or its header changed): leave it alone;
 * - `sourceAhead`: the incoming copy holds every entry line of the store copy and more, under the
 *   same header (the source grew): appending the rest loses nothing;
 * - `diverged`: each has lines the other lacks, or the headers name two sessions (two ids that
 *   meet at one file name): a conflict, nothing may be written.
 */
export type SessionRelation = "same" | "storeAhead" | "sourceAhead" | "diverged";

type Line = string | Uint8Array;

function equal(a: Line, b: Line): boolean {
  if (typeof a === "string" && typeof b === "string") return a === b;
  return Buffer.from(a).equals(Buffer.from(b));
}

/** The `id` a header line names, or undefined (not a JSON object with a string id). */
function headerId(line: Line): string | undefined {
  try {
    const value = JSON.parse(typeof line === "string" ? line : Buffer.from(line).toString("utf8")) as { id?: unknown } | null;
    return typeof value?.id === "string" ? value.id : undefined;
  } catch {
    return undefined;
  }
}

/** Two headers of two sessions: each names an id, and they differ (never one session's copies). */
function otherSession(a: Line | null, b: Line | null): boolean {
  if (a === null || b === null) return false;
  const idA = headerId(a);
  const idB = headerId(b);
  return idA !== undefined && idB !== undefined && idA !== idB;
}

/** The relation once one pair of lines (null: that side ended) is read; undefined: read on. */
function step(sameHeader: boolean, incoming: Line | null, stored: Line | null): SessionRelation | undefined {
  if (incoming === null && stored === null) return sameHeader ? "same" : "storeAhead";
  if (incoming === null) return "storeAhead";
  if (stored === null) return sameHeader ? "sourceAhead" : "diverged";
  return equal(incoming, stored) ? undefined : "diverged";
}

/** Relates two sessions given as line iterators (header first); reads each only as far as needed. */
export function relateSessions(incoming: Iterator<Line>, stored: Iterator<Line>): SessionRelation {
  const next = (it: Iterator<Line>) => {
    const r = it.next();
    return r.done === true ? null : r.value;
  };
  const headerA = next(incoming);
  const headerB = next(stored);
  if (otherSession(headerA, headerB)) return "diverged";
  const sameHeader = headerA !== null && headerB !== null && equal(headerA, headerB);
  for (;;) {
    const found = step(sameHeader, next(incoming), next(stored));
    if (found !== undefined) return found;
  }
}

/** `relateSessions` over async line sequences (a store read a batch at a time); memory stays bounded. */
export async function relateSessionStreams(incoming: AsyncIterable<Line>, stored: AsyncIterable<Line>): Promise<SessionRelation> {
  const a = incoming[Symbol.asyncIterator]();
  const b = stored[Symbol.asyncIterator]();
  const next = async (it: AsyncIterator<Line>) => {
    const r = await it.next();
    return r.done === true ? null : r.value;
  };
  try {
    const headerA = await next(a);
    const headerB = await next(b);
    if (otherSession(headerA, headerB)) return "diverged";
    const sameHeader = headerA !== null && headerB !== null && equal(headerA, headerB);
    for (;;) {
      const found = step(sameHeader, await next(a), await next(b));
      if (found !== undefined) return found;
    }
  } finally {
    await a.return?.();
    await b.return?.();
  }
}
