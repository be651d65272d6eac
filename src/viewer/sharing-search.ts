import type { SearchHit } from "../search/session-index.ts";

/** Words of a query that the index matches on (its operators and syntax left out), lower-cased. */
export function queryWords(query: string): string[] {
  const words = query.match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((w) => !["AND", "OR", "NOT", "NEAR"].includes(w)).map((w) => w.toLowerCase());
}

/**
 * The hits the sharing view may show: those whose entry, as the sharing view shows it (redacted),
 * still holds every word of the query. The index holds the stored text, secrets included: without
 * this, a hit on a redacted secret's characters (`ghp_A1b*`, then `ghp_A1b2*`…) would confirm them
 * one guess at a time. `sharedText` gives an entry's redacted text (null: not shown).
 */
export async function sharedHits<H extends Pick<SearchHit, "sessionId" | "entryId">>(
  hits: readonly H[],
  query: string,
  sharedText: (sessionId: string, entryIds: string[]) => Promise<Map<string, string>>,
): Promise<H[]> {
  const words = queryWords(query);
  const bySession = new Map<string, string[]>();
  for (const h of hits) bySession.set(h.sessionId, [...(bySession.get(h.sessionId) ?? []), h.entryId]);
  const texts = new Map<string, Map<string, string>>();
  for (const [sessionId, ids] of bySession) {
    try {
      texts.set(sessionId, await sharedText(sessionId, ids));
    } catch {
      texts.set(sessionId, new Map());
    }
  }
  return hits.filter((h) => {
    const text = texts.get(h.sessionId)?.get(h.entryId);
    if (text === undefined) return false;
    const lower = text.toLowerCase();
    return words.every((w) => lower.includes(w));
  });
}
