import type { ArtifactStore } from "../../artifacts/artifact-store.ts";
import { TranscriptStoreError } from "../../errors.ts";
import { isRecord, type SessionEntry, type SessionHeader } from "../../format/types.ts";
import { checkBlobSize, checkLineSize, type PgBlobWrite, type PgLine, type PgStore } from "./db/index.ts";
import type { BlobReader } from "../../session/rehydrate.ts";
import type { ResolvedSessionManagerOptions } from "../../session/session-options.ts";
import type { Blobs, ForkRequest, OpenedSession, SessionStorage, StorageHooks } from "../session-storage.ts";
import type { PgArtifactMirror } from "./pg-artifacts.ts";
import type { PgBlobCache } from "./pg-blob-cache.ts";
import { LeaseKeeper } from "./pg-lease-keeper.ts";
import { prepareRow } from "./pg-lines.ts";
import { sealRow } from "./pg-cipher.ts";
import type { LineCipher, StoreKey } from "../../crypto/line-cipher.ts";
import { reconnecting } from "./pg-reconnect.ts";

/**
 * The `cause` of the `SESSION_LOCKED` of a `close()` (or `fork()`) that could not store every entry
 * this process appended, because another writer took the lease over: what the database holds of
 * them and what it does not.
 */
export class EntriesNotStored extends Error {
  constructor(
    /** Every entry up to this seq is stored (0: none). */
    readonly storedThroughSeq: number,
    /** Ids of the entries appended here that the database does not hold, in order. */
    readonly notStored: readonly string[],
  ) {
    super(`entries through seq ${storedThroughSeq} are stored; ${notStored.length} entr${notStored.length === 1 ? "y is" : "ies are"} not`);
  }
}

/** Lines per append transaction (one round trip and one commit each). */
const BATCH_LINES = 256;
/** Bytes of lines and blobs per append transaction, past which a batch is cut. */
const BATCH_BYTES = 8 * 1024 * 1024;

/** A queued row: its line and the bytes of the blobs it introduces. */
export interface Pending {
  row: PgLine;
  blobs: PgBlobWrite[];
  bytes: number;
}

/** What a fork copies of a stored session: its rows up to a seq, then rows only memory holds. */
export interface ForkSource {
  /** The source's rows 1…this seq hold what the fork shows first (a server-side copy). */
  storedThroughSeq: number;
  /** The rows the fork shows after those, not stored in the source (its lease was lost), in order. */
  unstored: Pending[];
}

export interface PgSessionInit {
  store: PgStore;
  blobs: Blobs;
  cache: PgBlobCache;
  options: ResolvedSessionManagerOptions;
  sessionId: string;
  location: string;
  /** The lease's fencing token (null: read-only, or not created yet in deferred mode). */
  token: number | null;
  holder: string;
  /** The next entry's seq. */
  nextSeq: number;
  /** The session row exists (false: deferred until the first assistant message). */
  created: boolean;
  /** The session row holds its first user message's preview already (later rows need none). */
  firstMessageKnown: boolean;
  /** The session's artifacts (a working directory written back to rows by flush). */
  artifacts: PgArtifactMirror;
  /** An encrypted session's line cipher and key (pg-cipher.ts); null: a plain session. */
  cipher: { lines: LineCipher; key: StoreKey } | null;
  forkInto: (request: ForkRequest, source: PgSessionStorage, copy: ForkSource) => Promise<OpenedSession>;
}

/**
 * A session stored as PostgreSQL rows. Appends are synchronous to the caller: each entry runs the
 * prepare pipeline, joins a queue and is committed in batches (one fenced transaction each: blobs
 * first, then lines; see docs/postgres.md). `flush()` resolves once everything queued is committed
 * — that is the acknowledgement; a failed commit throws there (`PERSISTENCE_FAILED`, or
 * `SESSION_LOCKED` when the lease was taken over) and the entries stay queued for the next flush.
 */
export class PgSessionStorage implements SessionStorage {
  readonly kind = "postgres" as const;
  readonly path = null;
  readonly location: string;
  readonly blobs: Blobs;
  readonly blobReader: BlobReader;
  private readonly queue: Pending[] = [];
  /** Entries kept back (deferUntilAssistant), already prepared: one that cannot be stored was refused at its append. */
  private readonly deferred: Pending[] = [];
  private committing: Promise<void> | null = null;
  private scheduled = false;
  private failure: Error | null = null;
  private lost: Error | null = null;
  private readonly keeper: LeaseKeeper;
  private closed = false;
  /** A deferred session's create was attempted (its outcome may be unknown: see createWithFirstBatch). */
  private createTried = false;
  /** Nothing is stored until the first assistant message (`deferUntilAssistant` on a new session). */
  private deferring: boolean;
  /** The seq the next prepared entry will have (bound into an encrypted line): entries are queued and committed in order. */
  private nextOrdinal: number;

  constructor(
    private readonly init: PgSessionInit,
    private readonly hooks: StorageHooks,
  ) {
    this.location = init.location;
    this.blobs = init.blobs;
    this.blobReader = init.cache;
    this.deferring = !init.created;
    this.nextOrdinal = init.nextSeq;
    this.keeper = new LeaseKeeper(init.store.leases, init.sessionId, init.options.lockStaleMs, (err) => this.loseLease(err));
    if (init.token !== null) this.keeper.start(init.token);
  }

  get sessionId(): string {
    return this.init.sessionId;
  }

  get store(): PgStore {
    return this.init.store;
  }

  /** An encrypted session's key (a fork is encrypted with it), else null. */
  get storeKey(): StoreKey | null {
    return this.init.cipher?.key ?? null;
  }

  persist(entry: SessionEntry): SessionEntry {
    if (this.deferring) {
      // Prepared now, like any append: an entry that cannot be stored is refused here, out of memory,
      // and never holds back the kept-back entries (nor the session's creation) at the first answer.
      const pending = this.prepareEntry(entry);
      this.deferred.push(pending);
      const isAssistant = entry.type === "message" && isRecord(entry.message) && entry.message.role === "assistant";
      if (isAssistant) {
        this.deferring = false;
        for (const p of this.deferred.splice(0)) this.enqueue(p);
      }
      return entry;
    }
    const pending = this.prepareEntry(entry);
    this.enqueue(pending);
    return this.init.options.rehydrate === "lazy" ? pending.prepared : entry;
  }

  /**
   * The row an entry becomes, with the blobs it stores (a lazy session's refs travel with their bytes
   * when this process has them). A line or blob larger than one row holds is refused here
   * (`PERSISTENCE_FAILED`), before the entry is in memory or queued: it can never block the entries after it.
   */
  private prepareEntry(entry: SessionEntry): Pending & { prepared: SessionEntry } {
    const { cipher } = this.init;
    const withPreview = !this.init.firstMessageKnown && cipher === null;
    const plain = prepareRow(entry, this.init.options.prepare, (w) => this.hooks.warn(w), withPreview);
    const { blobs, prepared } = plain;
    // An encrypted session's line is sealed now, bound to the seq it will have (queued and committed in order).
    const row = cipher === null ? plain.row : sealRow(plain.row, cipher.lines, this.nextOrdinal);
    const { limits } = this.init.store;
    checkLineSize(row.line, limits);
    for (const blob of blobs) checkBlobSize(blob.bytes.byteLength, limits);
    if (row.firstMessage) this.init.firstMessageKnown = true;
    const own = new Set(blobs.map((b) => b.sha256));
    for (const hash of row.blobRefs ?? []) {
      if (own.has(hash)) continue;
      const bytes = this.init.cache.cached(hash);
      if (bytes !== null) {
        blobs.push({ sha256: hash, bytes });
        own.add(hash);
      }
    }
    const bytes = row.line.length + blobs.reduce((n, b) => n + b.bytes.byteLength, 0);
    this.nextOrdinal++;
    return { row, blobs, bytes, prepared };
  }

  private enqueue(pending: Pending): void {
    for (const blob of pending.blobs) this.init.cache.remember(blob.sha256, blob.bytes);
    this.queue.push({ row: pending.row, blobs: pending.blobs, bytes: pending.bytes });
    this.schedule();
  }

  /** Commits in the background soon after appends (one batch per turn of the event loop at most). */
  private schedule(): void {
    if (this.scheduled || this.committing !== null || this.failure !== null) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.commit().catch(() => {
        // kept in `failure`: the next flush() reports it and retries
      });
    });
  }

  /**
   * Commits the queue batch by batch; a failure keeps the rest (and the failed batch) queued. One
   * drain at a time: a call while one runs gets that one (cleared only once it settled).
   */
  private commit(): Promise<void> {
    if (this.committing === null) {
      this.committing = this.drain().finally(() => {
        this.committing = null;
      });
    }
    return this.committing;
  }

  private async drain(): Promise<void> {
    try {
      if (!this.init.created && this.queue.length > 0) await this.createWithFirstBatch();
      while (this.queue.length > 0) {
        if (this.lost !== null) throw this.lost;
        const token = this.init.token;
        if (token === null) throw new TranscriptStoreError("READ_ONLY", "Session is read-only", { path: this.location });
        const batch = takeBatch(this.queue);
        const blobs = batch.flatMap((p) => p.blobs);
        const firstSeq = this.init.nextSeq;
        await this.fencedWrite(() =>
          this.init.store.appendBatch(
            this.sessionId,
            token,
            firstSeq,
            batch.map((p) => p.row),
            blobs,
          ),
        );
        this.queue.splice(0, batch.length);
        this.init.nextSeq += batch.length;
      }
      this.failure = null;
    } catch (err) {
      this.failure = err as Error;
      throw err;
    }
  }

  /**
   * Creates a deferred session's row with its lease AND its first batch of rows in ONE transaction,
   * from the header memory holds now: a process killed (or a connection lost) before COMMIT leaves
   * no session, never an empty one that listing shows and `continueRecent` resumes without its history.
   * Creating is not idempotent, so an attempt after one whose outcome is unknown (the connection lost
   * at COMMIT) first looks whether that one committed: the row exists with our lease (our holder name
   * is unique); its rows then went with it, and the ordinary append that follows finds them stored
   * (compared line by line, not written again).
   */
  private async createWithFirstBatch(): Promise<void> {
    const { store, holder } = this.init;
    const lease = { holder, ttlMs: this.init.options.lockStaleMs };
    const batch = takeBatch(this.queue);
    const created = await this.fencedWrite(async () => {
      if (this.createTried) {
        const found = await store.leases.current(this.sessionId);
        if (found !== null && found.holder === holder) return { token: found.token, rows: 0 };
        if (found !== null) throw new TranscriptStoreError("SESSION_LOCKED", `Session ${this.sessionId} was created, and its lease lost`);
      }
      this.createTried = true;
      const first = { lines: batch.map((p) => p.row), blobs: batch.flatMap((p) => p.blobs) };
      const { token } = await store.createSessionWithRows(JSON.stringify(this.hooks.header()), [first], { lease });
      return { token: token!, rows: batch.length };
    });
    this.init.created = true;
    this.setToken(created.token);
    this.queue.splice(0, created.rows);
    this.init.nextSeq += created.rows;
  }

  asStored(entry: SessionEntry): SessionEntry {
    return entry;
  }

  assertHeld(): void {
    if (this.lost !== null) throw this.lost;
    if (this.init.token !== null && !this.keeper.fresh) {
      // This process did not renew its lease within its period (paused, or cut off): a taker may
      // hold it now. The database would refuse the append anyway; refusing here keeps memory honest.
      const err = new TranscriptStoreError("SESSION_LOCKED", `The lease of session ${this.sessionId} may have been taken over`);
      this.loseLease(err);
      throw err;
    }
  }

  artifacts(): ArtifactStore | null {
    return this.init.artifacts.artifacts();
  }

  /** The session row exists (a deferred session has none before its first assistant message). */
  get isStored(): boolean {
    return this.init.created;
  }

  /**
   * Forks exactly what memory shows (`request.entries`): the rows stored up to the last of them that
   * is stored (copied server-side), then the rest from this process's queue. What the fork shows is
   * fixed now, synchronously: the stored rows and the queue. A writer flushes first; one whose lease
   * is lost (found before or by that flush) cannot store its queued rows, so the fork writes them.
   */
  async fork(request: ForkRequest): Promise<OpenedSession> {
    const storedBefore = this.init.nextSeq - 1;
    const shownQueued = this.queue.length;
    if (this.init.created && this.init.token !== null && this.lost === null) {
      await this.flush().catch((err: unknown) => {
        if (this.lost === null) throw err; // not a lost lease: the source could not commit, nor can the fork
      });
    }
    if (this.committing !== null) await this.committing.catch(() => {});
    const committed = Math.min(this.init.nextSeq - 1 - storedBefore, shownQueued);
    const copy = { storedThroughSeq: storedBefore + committed, unstored: this.queue.slice(0, shownQueued - committed) };
    return this.init.forkInto(request, this, copy);
  }

  async moveTo(header: SessionHeader): Promise<void> {
    await this.flushEntries();
    if (!this.init.created) return; // nothing stored yet: the header is written with the first batch
    const token = this.init.token;
    if (token === null) throw new TranscriptStoreError("READ_ONLY", "Session is read-only", { path: this.location });
    // fenced, and retried across a lost connection (the same header again: idempotent)
    await this.fencedWrite(() => this.init.store.moveSession(this.sessionId, token, JSON.stringify(header)));
  }

  /**
   * Commits every queued entry (rethrowing a commit failure; the entries stay queued). A writer
   * that lost its lease acknowledges nothing more: SESSION_LOCKED, even with nothing queued.
   */
  async flushEntries(): Promise<void> {
    if (this.committing !== null) await this.committing.catch(() => {});
    if (this.queue.length > 0) await this.commit();
    else if (this.lost !== null) throw this.lost;
  }

  async flush(): Promise<void> {
    await this.flushEntries();
    const token = this.init.token;
    if (this.init.created && token !== null) await this.fencedWrite(() => this.init.artifacts.sync(token));
  }

  /**
   * A write fenced by the lease, retried across lost connections (pg-reconnect.ts); a SESSION_LOCKED
   * refusal means the lease was taken over: the manager turns read-only.
   */
  private fencedWrite<T>(write: () => Promise<T>): Promise<T> {
    return reconnecting(write, () => this.lost).catch((err: unknown) => {
      if (err instanceof TranscriptStoreError && err.code === "SESSION_LOCKED") this.loseLease(err);
      throw err;
    });
  }

  /**
   * Commits what is queued, then releases the lease and removes the artifacts' working directory.
   * When that commit fails, nothing is given up: the entries, the artifacts and the lease (still
   * renewed) stay, `close()` rejects, and a later `close()` tries again. A lost lease (known before,
   * or found by this flush) has nothing left to commit to: the session is closed at once, and when
   * entries appended here were not stored, `close()` rejects with `SESSION_LOCKED` whose cause,
   * `EntriesNotStored`, says which (memory still shows them: a `fork()` stores them in a new session).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.lost === null && (this.init.token !== null || this.queue.length > 0)) {
      await this.flush().catch((err: unknown) => {
        if (this.lost === null) throw err;
      });
    }
    if (this.committing !== null) await this.committing.catch(() => {});
    this.closed = true;
    this.keeper.stop();
    this.init.artifacts.dispose();
    if (this.lost !== null) {
      const stored = await this.storedOfQueue();
      if (stored === this.queue.length) return;
      const cause = new EntriesNotStored(
        this.init.nextSeq - 1 + stored,
        this.queue.slice(stored).map((p) => String(p.row.entryId)),
      );
      throw new TranscriptStoreError(
        "SESSION_LOCKED",
        `Session ${this.sessionId} closed after its lease was taken over: ${cause.message}`,
        {
          path: this.location,
          cause,
        },
      );
    }
    if (this.init.token !== null) {
      await this.init.store.leases.release(this.sessionId, this.init.token).catch(() => false);
    }
  }

  /**
   * How many rows at the queue's head the database holds after all: a batch whose commit reply was
   * lost before the lease was may have committed. Read without the lease; 0 when it cannot be read.
   */
  private async storedOfQueue(): Promise<number> {
    if (this.queue.length === 0) return 0;
    const from = this.init.nextSeq;
    const lines: string[] = [];
    try {
      await this.init.store.readSession(this.sessionId, (batch) => void lines.push(...batch.map((e) => e.line)), {
        fromSeq: from,
        toSeq: from + this.queue.length - 1,
      });
    } catch {
      return 0;
    }
    let n = 0;
    while (n < lines.length && lines[n] === this.queue[n]!.row.line) n++;
    return n;
  }

  /** The bytes of a blob this process appended or read, or null (a fork of what the database may lack). */
  cachedBlob(hash: string): Buffer | null {
    return this.init.cache.cached(hash);
  }

  /** Entries appended but not yet committed (for tests and diagnostics). */
  get pendingCount(): number {
    return this.queue.length + this.deferred.length;
  }

  /** The session row was created with this lease (a deferred session's first batch). */
  setToken(token: number): void {
    this.init.token = token;
    this.keeper.start(token);
  }

  private loseLease(err: Error): void {
    if (this.lost !== null) return;
    this.lost =
      err instanceof TranscriptStoreError && err.code === "SESSION_LOCKED" ? err : new TranscriptStoreError("SESSION_LOCKED", err.message);
    this.keeper.stop();
    this.hooks.lost(err);
  }
}

/** The queue's head up to the batch limits (at least one line). */
function takeBatch(queue: readonly Pending[]): Pending[] {
  let bytes = 0;
  let n = 0;
  while (n < queue.length && n < BATCH_LINES) {
    bytes += queue[n]!.bytes;
    n++;
    if (bytes >= BATCH_BYTES) break;
  }
  return queue.slice(0, n);
}
