import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { registerReferrer, referrerFor } from "../blob/blob-referrers.ts";
import { BlobStore } from "../blob/blob-store.ts";
import { TranscriptStoreError, type StoreWarning } from "../errors.ts";
import type { SessionEntry as EngineEntry, SessionHeader as EngineHeader } from "../format/types.ts";
import { InlineImageSources } from "../session/inline-image-sources.ts";
import { ensureSessionDir } from "../session/session-dirs.ts";
import { SessionFile } from "../session/session-file.ts";
import { loadSessionFile } from "../session/session-loader.ts";
import { acquireSessionLockSync, type SyncSessionLock } from "../session/session-lock.ts";
import { SessionWriter } from "../session/session-writer.ts";
import type { ResolvedPiOptions } from "./options.ts";
import type { SessionEntry, SessionHeader } from "./types.ts";

/** This process's writer of each session file (by resolved path): a newer one takes the file over. */
const writers = new Map<string, PiSessionDisk>();

/**
 * One session file as the facade writes it, through the engine: its single-writer lock (taken
 * synchronously), the prepare pipeline with images to the blob store, torn-tail repair, atomic
 * whole-file rewrites. The facade keeps the entries; this keeps the bytes.
 */
export class PiSessionDisk {
  private lock: SyncSessionLock | null = null;
  private readonly file: SessionFile;
  private readonly writer: SessionWriter;
  private readonly blobs: BlobStore;
  /** While a loaded file is repaired or upgraded: its own header (the manager's is not set yet). */
  private loadingHeader: SessionHeader | null = null;
  /** A newer manager of this process took the file (and its lock) over: this one is read-only. */
  private superseded = false;

  constructor(
    readonly path: string,
    private readonly options: ResolvedPiOptions,
    header: () => SessionHeader,
  ) {
    const engine = options.engine;
    this.blobs = new BlobStore(engine.blobsDir, { fsync: engine.fsync });
    this.file = new SessionFile(path, { fsync: engine.fsync, now: engine.now });
    const writerOptions = {
      prepare: engine.prepare,
      rehydrate: engine.rehydrate,
      missingBlob: () => null,
      rewritten: () => {},
      register: () => registerReferrer(engine.blobsDir, referrerFor(path, options.sessionsRoot)),
      warn: (w: StoreWarning) => this.warn(w),
    };
    this.writer = new SessionWriter(
      this.file,
      this.blobs,
      writerOptions,
      () => (this.loadingHeader ?? header()) as unknown as EngineHeader,
      true,
    );
  }

  /** Whether another manager of this process writes `path` now (holds its lock). */
  static writtenInProcess(path: string): boolean {
    const writer = writers.get(path);
    return writer !== undefined && writer.lock !== null;
  }

  /**
   * Takes the lock unless held, else checks it is still ours. Another process's live writer:
   * SESSION_LOCKED. Another writer of this process (pi opens one file with several managers and
   * never closes them): this one takes the file and its lock over, and that one turns read-only
   * (its next write is SESSION_LOCKED), so two writers never splice the file.
   */
  ensureLocked(): void {
    if (this.superseded)
      throw new TranscriptStoreError(
        "SESSION_LOCKED",
        `Session file was taken over by a newer session manager in this process; this one is read-only: ${this.path}`,
        { path: this.path },
      );
    if (this.lock !== null) {
      this.lock.assertHeld();
      return;
    }
    const previous = writers.get(this.path);
    if (previous !== undefined && previous !== this && previous.lock !== null) {
      this.lock = previous.lock;
      previous.lock = null;
      previous.superseded = true;
      previous.file.close();
      writers.set(this.path, this);
      this.lock.assertHeld();
      return;
    }
    ensureSessionDir(dirname(this.path), this.options.sessionsRoot, this.options.engine.fsync);
    const onCompromised = (err: Error) =>
      this.warn({ code: "LOCK_COMPROMISED", message: `Session lock lost (${err.message}); appends now fail` });
    this.lock = acquireSessionLockSync(this.path, { staleMs: this.options.engine.lockStaleMs, onCompromised });
    writers.set(this.path, this);
  }

  /**
   * Locks and reads the file (images resolved back from the blob store), then makes it safe to
   * append to: a torn tail goes to quarantine, a legacy file is rewritten as v3 (its unreadable
   * lines quarantined). Null for an empty file; BAD_HEADER (nothing written) for a non-session.
   */
  load(): { header: SessionHeader; entries: SessionEntry[] } | null {
    this.ensureLocked();
    const engine = this.options.engine;
    const loaded = loadSessionFile(this.path, {
      rehydrate: "eager",
      blobThreshold: engine.prepare.blobThreshold,
      chunkSize: engine.chunkSize,
      blobs: this.blobs,
      sources: new InlineImageSources(() => this.path),
      warn: (w) => this.warn(w),
      writable: true,
      fsync: engine.fsync,
    });
    if (loaded === null) return null;
    // A session written with refs before the store kept a registry of referrers gets registered here.
    if (loaded.hasBlobRefs) registerReferrer(engine.blobsDir, referrerFor(this.path, this.options.sessionsRoot));
    this.loadingHeader = loaded.header as unknown as SessionHeader;
    try {
      this.writer.repairOnOpen(loaded, loaded.entries, (w) => this.warn(w));
    } finally {
      this.loadingHeader = null;
    }
    return { header: loaded.header as unknown as SessionHeader, entries: loaded.entries as unknown as SessionEntry[] };
  }

  /**
   * The first write of a new session: the header and `entries` as a new file. Refused
   * (SESSION_EXISTS, nothing changed, no lock taken over) when a file is already at the path:
   * another writer created it (pi creates the file exclusively too), and replacing it would lose
   * that session.
   */
  createWhole(entries: readonly SessionEntry[]): void {
    this.assertAbsent();
    this.ensureLocked();
    this.assertAbsent();
    this.writer.writeWhole(entries as unknown as EngineEntry[]);
  }

  private assertAbsent(): void {
    if (existsSync(this.path))
      throw new TranscriptStoreError("SESSION_EXISTS", `Session file already exists (another writer created it): ${this.path}`, {
        path: this.path,
      });
  }

  /** The header and `entries` as the whole file, replaced atomically. */
  writeWhole(entries: readonly SessionEntry[]): void {
    this.ensureLocked();
    this.writer.writeWhole(entries as unknown as EngineEntry[]);
  }

  /** One entry appended as one whole line (PERSISTENCE_FAILED with nothing written otherwise). */
  append(entry: SessionEntry): void {
    this.ensureLocked();
    this.writer.persist(entry as unknown as EngineEntry);
  }

  /** Closes the file and releases the lock. */
  release(): void {
    this.file.close();
    if (writers.get(this.path) === this) writers.delete(this.path);
    const lock = this.lock;
    this.lock = null;
    lock?.releaseSync();
  }

  private warn(warning: StoreWarning): void {
    this.options.engine.onWarning({ ...warning, path: warning.path ?? this.path });
  }
}
