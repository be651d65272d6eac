import { TranscriptStoreError } from "../../errors.ts";
import type { PgImportBatch, PgImportSource, PgStore } from "./db/index.ts";
import { SessionCreatedMeanwhile, type PgImportResult } from "./db/session-import.ts";
import { relateSessionStreams, type SessionRelation } from "../session-relation.ts";
import {
  bytesSource,
  hashesOfLines,
  importConflict,
  type ImportOutcome,
  type SessionSnapshot,
  type SnapshotArtifact,
  verifiedSnapshotBlob,
} from "../session-snapshot.ts";
import { parseHeader, storedLineRow } from "./pg-lines.ts";
import { reconnecting } from "./pg-reconnect.ts";

/**
 * Sessions in and out of the database as backend-neutral snapshots (`SessionSnapshot`): the
 * PostgreSQL backend's `locate`, `exportSnapshot` and `importSnapshot`.
 */

/** Rows per read of an export, and lines per statement batch of an import. */
const BATCH = 500;

/** The session's entry lines in seq order, a batch (one read) at a time. */
async function* storedLines(store: PgStore, id: string): AsyncIterable<string> {
  for (let from = 1; ; from += BATCH) {
    const lines: string[] = [];
    await store.readSession(id, (rows) => void lines.push(...rows.map((r) => r.line)), { fromSeq: from, toSeq: from + BATCH - 1 });
    yield* lines;
    if (lines.length < BATCH) return;
  }
}

async function* none<T>(): AsyncIterable<T> {}

/** The database session `id` as a snapshot (`SESSION_NOT_FOUND` when there is none). A database keeps no quarantine. */
export async function exportPg(store: PgStore, name: string, id: string): Promise<SessionSnapshot> {
  const session = await store.getSession(id);
  if (session === null) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session ${id} in ${name}`);
  const lines = () => storedLines(store, id);
  return {
    header: parseHeader(session.header, `${name}#${id}`),
    headerLine: session.header,
    lines,
    quarantine: none,
    artifacts: () => artifactsOf(store, id),
    blobHashes: () => hashesOfLines(lines()),
    // (a blob is read by parts into one buffer, never one string: blob-transfer.ts)
    blob: async (hash) => {
      const bytes = await store.blobs.get(hash);
      return bytes === null ? null : bytesSource(bytes);
    },
  };
}

async function* artifactsOf(store: PgStore, id: string): AsyncIterable<SnapshotArtifact> {
  for (const listed of await store.artifacts.list(id)) {
    if (listed.damaged) continue; // left in the database, unread (opening the session warns of it)
    yield { name: listed.id, size: listed.size, open: () => pulled((onChunk) => store.artifacts.read(id, listed.id, onChunk)) };
  }
}

/**
 * The chunks a callback-style reader (`read(onChunk)`) delivers, as an async iterable: the reader
 * waits while two chunks are unconsumed, so memory holds a chunk or two, never the whole. A
 * consumer that stops early makes the reader fail (its transaction rolls back).
 */
async function* pulled(run: (onChunk: (chunk: Buffer) => Promise<void>) => Promise<unknown>): AsyncIterable<Buffer> {
  const queue: Buffer[] = [];
  // who waits: the consumer on a chunk (`wake`), the reader on room (`resume`)
  const waiting: { wake: (() => void) | null; resume: (() => void) | null } = { wake: null, resume: null };
  const state: { finished: boolean; stopped: boolean; failure: { err: unknown } | null } = {
    finished: false,
    stopped: false,
    failure: null,
  };
  const release = (which: "wake" | "resume") => {
    const w = waiting[which];
    waiting[which] = null;
    w?.();
  };
  const stoppedError = () => new Error("the reader of the chunks stopped");
  const running = run(async (chunk) => {
    if (state.stopped) throw stoppedError();
    queue.push(chunk);
    release("wake");
    if (queue.length >= 2) await new Promise<void>((r) => (waiting.resume = r));
    if (state.stopped) throw stoppedError();
  }).then(
    () => {
      state.finished = true;
      release("wake");
    },
    (err: unknown) => {
      state.failure = { err };
      state.finished = true;
      release("wake");
    },
  );
  try {
    for (;;) {
      const chunk = queue.shift();
      if (chunk !== undefined) {
        release("resume");
        yield chunk;
        continue;
      }
      if (state.finished) {
        if (state.failure !== null) throw state.failure.err;
        return;
      }
      await new Promise<void>((r) => (waiting.wake = r));
    }
  } finally {
    if (!state.finished) {
      state.stopped = true;
      release("resume");
      await running;
    }
  }
}

export interface PgTransferOptions {
  holder: string;
  ttlMs: number;
}

/**
 * Takes a snapshot into the database under the one rule (`relateSessions`) against the session of
 * its id: none → created in one transaction; the same → unchanged; a beginning of it → the rest
 * appended (under the session's lease, compared again in the transaction); diverged →
 * `IMPORT_CONFLICT`, nothing written. When the lines agree but the headers differ, the database
 * knows the header the last import brought (`sessions.imported_header`) and brings the source's
 * across when only the source's changed (`header: "updated"`), keeps its own when only it changed.
 * A snapshot carrying quarantine is refused (`INVALID_OPTION`, nothing written): a database keeps none.
 */
export async function importPg(
  store: PgStore,
  name: string,
  snapshot: SessionSnapshot,
  options: PgTransferOptions,
): Promise<ImportOutcome> {
  const { id } = snapshot.header;
  let damaged = 0;
  for await (const _ of snapshot.quarantine()) damaged++;
  if (damaged > 0) {
    throw new TranscriptStoreError(
      "INVALID_OPTION",
      `${damaged} damaged record(s): a database store has no quarantine; import into a file store instead`,
    );
  }
  let count = 0;
  for await (const _ of snapshot.lines()) count++;
  const location = `${name}#${id}`;
  const source: PgImportSource = {
    header: snapshot.headerLine,
    batches: () => batchesOf(snapshot.lines()),
    // asked in the transaction, once the blobs the database holds are locked against a gc
    bytesOf: (hash) => verifiedSnapshotBlob(snapshot, hash),
    idleMs: options.ttlMs,
  };
  const outcome = (status: ImportOutcome["status"], relation: SessionRelation | null, result?: PgImportResult): ImportOutcome => ({
    status,
    id,
    location,
    relation,
    header: result?.header ?? (relation === "storeAhead" ? "kept" : "same"),
    lines: count,
  });
  return reconnecting(async () => {
    for (;;) {
      const existing = await store.getSession(id);
      if (existing === null) {
        try {
          const result = await store.importSession(source, null);
          await carryArtifacts(store, snapshot);
          return outcome("created", null, result);
        } catch (err) {
          // another import of this session committed first: this one becomes a re-import
          if (err instanceof TranscriptStoreError && err.cause instanceof SessionCreatedMeanwhile) continue;
          throw err;
        }
      }
      const relation = await relateSessionStreams(
        withHeader(snapshot.headerLine, snapshot.lines()),
        withHeader(existing.header, storedLines(store, id)),
      );
      // Headers that differ over agreeing lines: the database's header rule decides (the lines are appended when the source has more).
      const linesOnly =
        existing.header !== snapshot.headerLine
          ? await relateSessionStreams(withHeader("", snapshot.lines()), withHeader("", storedLines(store, id)))
          : relation;
      if (relation === "diverged" && linesOnly !== "sourceAhead") throw importConflict(id, location);
      // Not diverged: the import runs under the lease (comparing again in its transaction, recording the header it brought).
      const result = await reimport(store, source, id, options, (token) => carryArtifacts(store, snapshot, token));
      return outcome(result.inserted > 0 ? "appended" : "unchanged", relation, result);
    }
  }, noStop);
}

const noStop = () => null;

async function* withHeader(header: string, lines: Iterable<string> | AsyncIterable<string>): AsyncIterable<string> {
  yield header;
  yield* lines;
}

/** Puts the artifacts the database session lacks (an artifact it has is never replaced); fenced by the lease `token` when given. */
async function carryArtifacts(store: PgStore, snapshot: SessionSnapshot, token?: number): Promise<void> {
  const { id } = snapshot.header;
  const have = new Set((await store.artifacts.list(id)).map((a) => a.id));
  for await (const artifact of snapshot.artifacts()) {
    if (!have.has(artifact.name)) await store.artifacts.put(id, artifact.name, artifact.open(), {}, token);
  }
}

/** A re-import under the session's lease (SESSION_LOCKED while someone has it open), then `after` under it; the lease is given back. */
async function reimport(
  store: PgStore,
  source: PgImportSource,
  id: string,
  options: PgTransferOptions,
  after: (token: number) => Promise<void>,
): Promise<PgImportResult> {
  const token = await acquire(store, id, options);
  try {
    const result = await store.importSession(source, token);
    await after(token);
    return result;
  } finally {
    await store.leases.release(id, token).catch(() => false);
  }
}

/** Takes the lease; an earlier attempt whose reply was lost (the connection cut) may have taken it already: ours is kept. */
async function acquire(store: PgStore, id: string, options: PgTransferOptions): Promise<number> {
  try {
    return await store.leases.acquire(id, options.holder, options.ttlMs);
  } catch (err) {
    if (!(err instanceof TranscriptStoreError) || err.code !== "SESSION_LOCKED") throw err;
    const current = await store.leases.current(id);
    if (current?.holder !== options.holder) throw err;
    return current.token;
  }
}

/** The snapshot's lines as rows, a batch at a time: only one batch is held while the transaction writes. */
async function* batchesOf(lines: AsyncIterable<string>): AsyncIterable<PgImportBatch> {
  let batch: string[] = [];
  for await (const line of lines) {
    batch.push(line);
    if (batch.length === BATCH) {
      yield { lines: batch.map((line) => storedLineRow(line)), blobs: [] };
      batch = [];
    }
  }
  if (batch.length > 0) yield { lines: batch.map((line) => storedLineRow(line)), blobs: [] };
}
