import type { Pool } from "./pg-client.ts";
import { TranscriptStoreError } from "../../../errors.ts";
import { isForeignKeyViolation } from "./pg-errors.ts";
import { reconnecting } from "./reconnect.ts";
import { withTransaction } from "./transaction.ts";

/** Options of `collectBlobs`. */
export interface PgGcOptions {
  /** Only blobs untouched (stored or re-put) for longer than this are deleted. @default 3_600_000 (1 h) */
  graceMs?: number;
  /** Report what would be deleted, delete nothing. @default false */
  dryRun?: boolean;
  /** Blobs deleted per transaction. @default 500 */
  batch?: number;
}

/** What a gc run did. */
export interface PgGcReport {
  /** Hashes deleted (or, with `dryRun`, that would be). */
  deleted: string[];
  /** Bytes of those blobs. */
  bytes: number;
}

/** @default 3_600_000 */
export const DEFAULT_GC_GRACE_MS = 3_600_000;

const CANDIDATES = `SELECT b.sha256 FROM blobs b
  WHERE b.touched < now() - $1 * interval '1 millisecond'
    AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.sha256 = b.sha256)`;

/**
 * Transactional mark-and-sweep of the blob table. The mark is the `blob_refs` table, kept by the
 * same transactions that append, rewrite or fork lines; the sweep deletes, a batch per
 * transaction, blobs with no ref that were not touched within the grace period, and it can never
 * delete a blob a concurrent writer is about to reference (docs/postgres.md, "Why gc is safe"):
 * a writer KEY SHARE-locks each blob row before inserting refs to it, and the sweep locks its
 * candidates `FOR UPDATE SKIP LOCKED`, so it passes by every row a writer holds; a ref committed
 * after the sweep's snapshot makes the foreign key refuse the delete (the batch is retried with a
 * fresh snapshot, which sees the ref). A batch cut by a lost connection is retried (reconnect.ts);
 * one whose COMMIT reply was lost may have deleted its blobs without their being reported.
 */
export async function collectBlobs(pool: Pool, options: PgGcOptions = {}): Promise<PgGcReport> {
  const graceMs = options.graceMs ?? DEFAULT_GC_GRACE_MS;
  const batch = options.batch ?? 500;
  if (!Number.isFinite(graceMs) || graceMs < 0 || !Number.isSafeInteger(batch) || batch < 1) {
    throw new TranscriptStoreError("INVALID_OPTION", `gc needs graceMs ≥ 0 and a positive batch (got ${graceMs}, ${batch})`);
  }
  const report: PgGcReport = { deleted: [], bytes: 0 };
  if (options.dryRun) {
    await withTransaction(pool, "Listing collectable blobs", async (client) => {
      const { rows } = await client.query<{ sha256: string; size: number }>(
        `SELECT c.sha256, b.size::float8 AS size FROM (${CANDIDATES}) c JOIN blobs b USING (sha256) ORDER BY c.sha256`,
        [graceMs],
      );
      for (const r of rows) {
        report.deleted.push(r.sha256);
        report.bytes += r.size;
      }
    });
    return report;
  }
  for (let conflicts = 0; ; ) {
    let rows: Array<{ sha256: string; size: number }>;
    try {
      // a batch cut by a lost connection (a server restart) is run again: it chooses its candidates anew
      rows = await reconnecting(
        () =>
          withTransaction(pool, "Collecting blobs", async (client) => {
            const result = await client.query<{ sha256: string; size: number }>(
              `DELETE FROM blobs b
                WHERE b.sha256 IN (${CANDIDATES} ORDER BY b.sha256 LIMIT $2 FOR UPDATE OF b SKIP LOCKED)
                  AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.sha256 = b.sha256)
                RETURNING b.sha256, b.size::float8 AS size`,
              [graceMs, batch],
            );
            return result.rows;
          }),
        () => null,
      );
    } catch (err) {
      if (!isForeignKeyViolation(err) || ++conflicts > 20) throw err;
      continue;
    }
    for (const r of rows) {
      report.deleted.push(r.sha256);
      report.bytes += r.size;
    }
    if (rows.length < batch) return report;
  }
}
