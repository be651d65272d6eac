import { ACCOUNTING_RULES, type SessionAccount } from "../accounting/session-account.ts";
import { cacheKey, statOf } from "./listing-cache.ts";
import { type ListingIndexOptions, openFactsDatabase, unavailable, writeBack } from "./listing-reader.ts";
import { type ListingStat, statMatches } from "./listing-table.ts";
import type { SqliteStatement } from "./sqlite.ts";

/** A row of `session_accounting`. */
interface AccountingRow {
  dev: number;
  ino: number;
  size: number;
  mtime_ms: number;
  account: string;
}

/** A session's accounting as the index keeps it (JSON; the blob set as an array). */
function encode(account: SessionAccount): string {
  return JSON.stringify({ ...account, blobRefs: [...account.blobRefs], rules: ACCOUNTING_RULES });
}

/** The cached account, or null when it was made by other accounting rules (then the file is read again). */
function decode(text: string): SessionAccount | null {
  const { rules, ...value } = JSON.parse(text) as Omit<SessionAccount, "blobRefs"> & { blobRefs: string[]; rules?: number };
  if ((rules ?? 1) !== ACCOUNTING_RULES) return null;
  return { ...value, blobRefs: new Set(value.blobRefs) };
}

/** `du`'s per-session accounting through the index: `account` for each session file, then `close`. */
export interface AccountingCache {
  /** The file's accounting: cached while its stat is unchanged, else `compute`d (and kept, on `close`). */
  account(path: string, compute: (path: string) => SessionAccount | null): SessionAccount | null;
  /** Writes back what was computed (one transaction) and closes the index. */
  close(): void;
}

/**
 * Opens the index's accounting rows for one pass over a store (as a listing opens its rows: only an
 * index that exists, never failing the pass), or null. A file is cached only when its stat was the
 * same before and after it was read, and not racily recent (`LISTING_RACY_MS`).
 */
export async function openAccountingCache(options: ListingIndexOptions): Promise<AccountingCache | null> {
  const opened = await openFactsDatabase(options);
  if (opened === null) return null;
  const { db, indexPath } = opened;
  let byPath: SqliteStatement;
  let put: SqliteStatement;
  try {
    byPath = db.prepare("SELECT dev, ino, size, mtime_ms, account FROM session_accounting WHERE path = ?");
    put = db.prepare("INSERT OR REPLACE INTO session_accounting (path, dev, ino, size, mtime_ms, account) VALUES (?, ?, ?, ?, ?, ?)");
  } catch (err) {
    db.close();
    unavailable(options.onWarning, indexPath, err);
    return null;
  }
  const pending: Array<{ path: string; key: ListingStat; account: SessionAccount }> = [];
  let broken = false;
  return {
    account(path, compute) {
      const before = statOf(path);
      if (before !== null && !broken) {
        try {
          const row = byPath.get(path) as unknown as AccountingRow | undefined;
          const cached = row !== undefined && statMatches(row.dev, row.ino, row.size, row.mtime_ms, before) ? decode(row.account) : null;
          if (cached !== null) return cached;
        } catch (err) {
          broken = true; // said once; the rest of the pass reads its files
          unavailable(options.onWarning, indexPath, err);
        }
      }
      const account = compute(path);
      const after = account === null || before === null ? null : statOf(path);
      const key = after === null ? null : cacheKey(after, Date.now());
      const same = key !== null && statMatches(before!.dev, before!.ino, before!.size, before!.mtimeMs, key);
      if (same && account !== null) pending.push({ path, key: key!, account });
      return account;
    },
    close() {
      try {
        if (pending.length > 0 && !broken)
          writeBack(
            () => {
              db.exec("BEGIN IMMEDIATE");
              try {
                for (const { path, key, account } of pending) put.run(path, key.dev, key.ino, key.size, key.mtimeMs, encode(account));
                db.exec("COMMIT");
              } catch (err) {
                try {
                  db.exec("ROLLBACK");
                } catch {
                  // the failure ended the transaction already
                }
                throw err;
              }
            },
            indexPath,
            options.onWarning,
          );
      } finally {
        db.close();
      }
    },
  };
}
