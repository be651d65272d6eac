import { hitTitle } from "./hit-copies.ts";
import { ListingCache } from "./listing-cache.ts";
import type { SqliteDatabase } from "./sqlite.ts";

/**
 * The title of each session file of the hits: its name, else its first user message, one line, cut
 * at `MAX_HIT_TITLE_CHARS`. Read through the listing rows (a row whose stat no longer matches is read
 * again and written back when the index can be written), so only the hits' files are looked at.
 */
export function sessionTitles(db: SqliteDatabase, paths: string[], now: number): Map<string, string> {
  const titles = new Map<string, string>();
  if (paths.length === 0) return titles;
  const cache = new ListingCache(db);
  const pass = cache.pass(paths, now);
  try {
    cache.store(pass, null);
  } catch {
    // writing the rows back only saves the next search a read: a busy or read-only index still answers
  }
  pass.infos.forEach((info, i) => {
    titles.set(paths[i]!, hitTitle(info?.title ?? info?.firstMessage));
  });
  return titles;
}
