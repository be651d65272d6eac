import { TranscriptStoreError, type StoreWarning } from "../../errors.ts";
import type { SessionEntry, SessionHeader } from "../../format/types.ts";
import type { PgImportBatch, PgImportHeader, PgImportResult, PgStore } from "../../database/index.ts";
import { SessionCreatedMeanwhile } from "../../database/session-import.ts";
import type { ResolvedPrepareOptions } from "../../prepare/pipeline.ts";
import { prepareRow } from "./pg-lines.ts";
import { reconnecting } from "./pg-reconnect.ts";

/** Entries per statement batch of an import (all batches go in one transaction). */
const IMPORT_BATCH = 256;

/** What an import did with one session. */
export type PgImportStatus = "imported" | "unchanged" | "updated" | "continued";

/** What an import did with one session, and with its header (see `PgImportHeader`). */
export interface PgImportOutcome {
  status: PgImportStatus;
  id: string;
  header: PgImportHeader;
}

export interface PgImportOptions {
  prepare: ResolvedPrepareOptions;
  holder: string;
  ttlMs: number;
  warn: (warning: StoreWarning) => void;
  /** Bytes of a blob an entry refers to (the source's store or the line holding it inline). */
  bytesOf: (hash: string) => Buffer | null;
}

/**
 * Writes a session (its header and entries, ids kept) into the database in ONE transaction
 * (`PgStore.importSession`): an import interrupted anywhere (a kill, a lost server) leaves no
 * session, or the database copy as it was, never a session without its entries. A lost connection
 * is retried (pg-reconnect.ts): the import is idempotent. Re-running is safe: stored lines are
 * compared, not written again; an import that extends the database copy appends the rest
 * (`updated`); one the database copy extends is left alone (`continued`); a header that changed
 * only in the source is brought across (`updated`), one that changed only in the database is kept
 * (`continued`); lines that differ, or headers that changed on both sides, are `IMPORT_CONFLICT`.
 */
export async function importIntoPostgres(
  store: PgStore,
  header: SessionHeader,
  entries: readonly SessionEntry[],
  options: PgImportOptions,
): Promise<PgImportOutcome> {
  const source = {
    header: JSON.stringify(header),
    batches: () => batchesOf(entries, options),
    bytesOf: options.bytesOf,
    idleMs: options.ttlMs,
  };
  const result = await reconnecting(async () => {
    for (;;) {
      if ((await store.getSession(header.id)) === null) {
        try {
          return await store.importSession(source, null);
        } catch (err) {
          // another import of this session committed first: this one becomes a re-import
          if (err instanceof TranscriptStoreError && err.cause instanceof SessionCreatedMeanwhile) continue;
          throw err;
        }
      }
      return reimport(store, source, header.id, options);
    }
  }, noStop);
  return { status: statusOf(result, entries.length), id: header.id, header: result.header };
}

const noStop = () => null;

/** A re-import under the session's lease (SESSION_LOCKED while someone has it open); the lease is given back after. */
async function reimport(
  store: PgStore,
  source: Parameters<PgStore["importSession"]>[0],
  id: string,
  options: PgImportOptions,
): Promise<PgImportResult> {
  const token = await acquire(store, id, options);
  try {
    return await store.importSession(source, token);
  } finally {
    await store.leases.release(id, token).catch(() => false);
  }
}

/** Takes the lease; an earlier attempt whose reply was lost (the connection cut) may have taken it already: ours is kept. */
async function acquire(store: PgStore, id: string, options: PgImportOptions): Promise<number> {
  try {
    return await store.leases.acquire(id, options.holder, options.ttlMs);
  } catch (err) {
    if (!(err instanceof TranscriptStoreError) || err.code !== "SESSION_LOCKED") throw err;
    const current = await store.leases.current(id);
    if (current?.holder !== options.holder) throw err;
    return current.token;
  }
}

function statusOf(result: PgImportResult, lines: number): PgImportStatus {
  if (result.created) return "imported";
  if (result.inserted > 0 || result.header === "updated") return "updated";
  if (result.lastSeq > lines || result.header === "kept") return "continued";
  return "unchanged";
}

/** The entries as rows, a batch at a time (the pipeline runs as the transaction reaches them). */
function* batchesOf(entries: readonly SessionEntry[], options: PgImportOptions): Iterable<PgImportBatch> {
  for (let start = 0; start < entries.length; start += IMPORT_BATCH) {
    const rows = entries.slice(start, start + IMPORT_BATCH).map((e) => prepareRow(e, options.prepare, options.warn));
    yield { lines: rows.map((r) => r.row), blobs: rows.flatMap((r) => r.blobs) };
  }
}
