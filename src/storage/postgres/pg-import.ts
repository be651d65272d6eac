import { TranscriptStoreError, type StoreWarning } from "../../errors.ts";
import type { SessionEntry, SessionHeader } from "../../format/types.ts";
import type { PgBlobWrite, PgStore } from "../../postgres/index.ts";
import { StoredLineMismatch } from "../../postgres/session-writes.ts";
import { withClient } from "../../postgres/transaction.ts";
import type { ResolvedPrepareOptions } from "../../prepare/pipeline.ts";
import { prepareRow } from "./pg-lines.ts";

/** Entries per append transaction of an import. */
const IMPORT_BATCH = 256;

/** What an import did with one session. */
export type PgImportStatus = "imported" | "unchanged" | "updated" | "continued";

export interface PgImportOptions {
  prepare: ResolvedPrepareOptions;
  holder: string;
  ttlMs: number;
  warn: (warning: StoreWarning) => void;
  /** Bytes of a blob an entry refers to (the source's store or the line holding it inline). */
  bytesOf: (hash: string) => Buffer | null;
}

/**
 * Writes a session (its header and entries, ids kept) into the database under its lease, batch by
 * batch. Re-running is safe: seqs already stored must hold the same lines (they are compared, not
 * written again). A database copy that extends the import is left alone (`continued`); an import
 * that extends it appends the rest (`updated`); lines that differ are `IMPORT_CONFLICT`, and
 * nothing of that batch is written. Blobs the database already holds are not sent again.
 */
export async function importIntoPostgres(
  store: PgStore,
  header: SessionHeader,
  entries: readonly SessionEntry[],
  options: PgImportOptions,
): Promise<{ status: PgImportStatus; id: string }> {
  const existing = await store.getSession(header.id);
  const lease = { holder: options.holder, ttlMs: options.ttlMs };
  const token =
    existing === null
      ? (await store.createSession(JSON.stringify(header), { lease })).token!
      : await store.leases.acquire(header.id, options.holder, options.ttlMs);
  let inserted = 0;
  try {
    for (let start = 0; start < entries.length; start += IMPORT_BATCH) {
      const rows = entries.slice(start, start + IMPORT_BATCH).map((e) => prepareRow(e, options.prepare, options.warn));
      const blobs = await missingBlobs(store, rows, options);
      try {
        const result = await store.appendBatch(
          header.id,
          token,
          start + 1,
          rows.map((r) => r.row),
          blobs,
        );
        inserted += rows.length - result.alreadyStored;
      } catch (err) {
        if (err instanceof TranscriptStoreError && err.cause instanceof StoredLineMismatch) {
          throw new TranscriptStoreError("IMPORT_CONFLICT", `Session ${header.id} in the database differs from the import: ${err.message}`);
        }
        throw err;
      }
    }
  } finally {
    await store.leases.release(header.id, token).catch(() => false);
  }
  if (existing === null) return { status: "imported", id: header.id };
  if (inserted > 0) return { status: "updated", id: header.id };
  return { status: existing.lastSeq > entries.length ? "continued" : "unchanged", id: header.id };
}

/** The blobs a batch's lines need that the database lacks (asked in one query), with their bytes. */
async function missingBlobs(store: PgStore, rows: ReturnType<typeof prepareRow>[], options: PgImportOptions): Promise<PgBlobWrite[]> {
  const needed = new Set(rows.flatMap((r) => r.row.blobRefs ?? []));
  if (needed.size === 0) return [];
  const { rows: present } = await withClient(store.pool, "Looking up blobs", (client) =>
    client.query<{ sha256: string }>("SELECT sha256 FROM blobs WHERE sha256 = ANY($1::text[])", [[...needed]]),
  );
  for (const row of present) needed.delete(row.sha256);
  const out: PgBlobWrite[] = [];
  const own = new Map(rows.flatMap((r) => r.blobs).map((b) => [b.sha256, b]));
  for (const hash of needed) {
    const bytes = own.get(hash)?.bytes ?? options.bytesOf(hash);
    if (bytes === null) {
      throw new TranscriptStoreError("BLOB_MISSING", `Blob ${hash} is referenced by the import but found nowhere`);
    }
    out.push({ sha256: hash, bytes });
  }
  return out;
}
