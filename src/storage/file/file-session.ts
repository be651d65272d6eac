import { headerEncryption } from "../../crypto/line-cipher.ts";
import { basename, join } from "node:path";
import { ArtifactCipher } from "../../artifacts/artifact-cipher.ts";
import { resealArtifacts } from "../../artifacts/artifact-reseal.ts";
import { ArtifactStore } from "../../artifacts/artifact-store.ts";
import { registerReferrer, referrerFor } from "../../blob/blob-referrers.ts";
import { BlobStore } from "../../blob/blob-store.ts";
import { TranscriptStoreError } from "../../errors.ts";
import { io } from "../../io.ts";
import type { SessionEntry, SessionHeader } from "../../format/types.ts";
import { linkTree } from "../../session/artifact-dir-copy.ts";
import { blobReader, InlineImageSources } from "../../session/inline-image-sources.ts";
import { artifactsDirOf, cwdBucket } from "../../session/paths.ts";
import type { BlobReader } from "../../session/rehydrate.ts";
import type { SessionFile } from "../../session/session-file.ts";
import { copyFileFrom, type FileIdentity, headerEndOffset, openSameFile } from "../../session/session-file-reader.ts";
import { acquireSessionLock, type SessionLock } from "../../session/session-lock.ts";
import { moveSessionFiles } from "../../session/session-move.ts";
import type { ResolvedSessionManagerOptions } from "../../session/session-options.ts";
import { SessionWriter } from "../../session/session-writer.ts";
import type { ForkRequest, OpenedSession, SessionStorage, StorageHooks } from "../session-storage.ts";
import { type BodyWriter, ensureParent, ensureRemoved, sessionPathFor } from "./file-paths.ts";

/** How a file session was opened: what the fork and move paths need to know about it. */
export interface FileSessionInit {
  options: ResolvedSessionManagerOptions;
  file: SessionFile;
  lock: SessionLock | null;
  headerWritten: boolean;
  readOnly: boolean;
  /** Images a lazy open left inline in the file (refs in memory). @default none */
  sources?: InlineImageSources;
  /** Where blobs referenced by given entries come from when the store lacks them (a fork's source). */
  missingBlob?: (hash: string) => Buffer | null;
  /** The file's lines after its header are exactly the entries in memory (nothing to repair or migrate). */
  fileMatchesMemory: boolean;
  /** A read-only open: which file was scanned and how many of its bytes memory holds. */
  scanned?: { identity: FileIdentity; length: number };
  /** Starts a fork's new file: file-start.ts `startNewFile`, handed in so that the creator is imported by no one it creates. */
  startNew: StartNewFile;
  /** Entry lines the opened file holds (the next encrypted line's ordinal follows them). @default 0 */
  entryLines?: number;
}

/** `startNewFile` (file-start.ts): locks a new session file at `path` and writes its header, entries or copied body. */
export type StartNewFile = (
  path: string,
  header: SessionHeader,
  options: ResolvedSessionManagerOptions,
  entries: SessionEntry[] | null,
  missingBlob?: (hash: string) => Buffer | null,
  body?: BodyWriter | null,
) => Promise<OpenedSession>;

/**
 * A session in a JSONL file: appends through `SessionWriter`, the single-writer lock, the blob
 * directory, the artifacts directory beside the file, byte-copy forks and journaled moves.
 */
export class FileSessionStorage implements SessionStorage {
  readonly kind = "file" as const;
  readonly blobs: BlobStore;
  readonly writer: SessionWriter;
  readonly sources: InlineImageSources;
  readonly blobReader: BlobReader;
  lock: SessionLock | null;
  private readonly options: ResolvedSessionManagerOptions;
  private fileMatchesMemory: boolean;
  private readonly scanned: { identity: FileIdentity; length: number } | null;
  private readonly readOnly: boolean;
  private readonly startNew: StartNewFile;
  private artifactStore: ArtifactStore | null = null;
  private closed = false;

  constructor(
    init: FileSessionInit,
    private readonly hooks: StorageHooks,
  ) {
    this.options = init.options;
    this.lock = init.lock;
    this.readOnly = init.readOnly;
    this.startNew = init.startNew;
    this.fileMatchesMemory = init.fileMatchesMemory;
    this.scanned = init.scanned ?? null;
    this.blobs = new BlobStore(init.options.blobsDir, { fsync: init.options.fsync, readOnly: init.readOnly });
    this.sources = init.sources ?? new InlineImageSources(() => this.path);
    this.blobReader = blobReader(this.blobs, this.sources);
    this.writer = new SessionWriter(
      init.file,
      this.blobs,
      {
        prepare: init.options.prepare,
        rehydrate: init.options.rehydrate,
        missingBlob: init.missingBlob ?? ((hash: string) => this.sources.bytesOf(hash)),
        rewritten: () => this.sources.clear(),
        register: () => this.registerWithBlobs(),
        warn: (w) => hooks.warn(w),
        key: init.options.encryption?.key ?? null,
        entryLines: init.entryLines ?? 0,
      },
      () => hooks.header(),
      init.headerWritten,
    );
  }

  get path(): string {
    return this.writer.file.path;
  }

  get location(): string {
    return this.path;
  }

  persist(entry: SessionEntry): SessionEntry {
    return this.writer.persist(entry);
  }

  asStored(entry: SessionEntry): SessionEntry {
    return this.sources.restore(entry);
  }

  assertHeld(): void {
    this.lock?.assertHeld();
  }

  artifacts(): ArtifactStore {
    const dir = artifactsDirOf(this.path);
    if (this.artifactStore === null || this.artifactStore.dir !== dir)
      this.artifactStore = new ArtifactStore(dir, {
        onWarning: this.options.onWarning,
        fsync: this.options.fsync,
        redactor: this.options.redactor,
        cipher: this.artifactCipher(),
      });
    return this.artifactStore;
  }

  /** An encrypted session's artifacts are sealed under its key, bound to its id (null: a plain session). */
  private artifactCipher(): ArtifactCipher | null {
    const header = this.hooks.header();
    if (headerEncryption(header) === null) return null;
    const key = this.options.encryption?.key ?? null;
    if (key === null) throw new TranscriptStoreError("KEY_REQUIRED", `Session ${header.id} is encrypted; its artifacts need the key`);
    return new ArtifactCipher(key.key, header.id);
  }

  /** Records in the blob store where this session lives (gc marks every registered place). */
  registerWithBlobs(path: string = this.path): void {
    registerReferrer(this.options.blobsDir, referrerFor(path, this.options.sessionsDir));
  }

  async fork(request: ForkRequest): Promise<OpenedSession> {
    const { header, entries, options } = request;
    const path = sessionPathFor(header, options);
    const sourceArtifacts = artifactsDirOf(this.path);
    ensureParent(path, options);
    linkTree(sourceArtifacts, artifactsDirOf(path), (w) => options.onWarning(w), "link", options.fsync);
    // An encrypted session's artifacts are bound to its id: the fork's copies are sealed again for the fork's.
    const from = this.artifactCipher();
    const key = this.options.encryption?.key ?? null;
    try {
      if (from !== null && key !== null) resealArtifacts(artifactsDirOf(path), from, new ArtifactCipher(key.key, header.id), options.fsync);
    } catch (err) {
      ensureRemoved(artifactsDirOf(path));
      throw err;
    }
    const body = request.whole ? this.copyableBody() : null;
    const copy: BodyWriter | null =
      body === null
        ? null
        : (emit, register) => {
            register();
            copyFileFrom(body.source, body.start, emit, undefined, body.end);
          };
    try {
      return await this.startNew(path, header, options, entries, (hash) => this.sources.bytesOf(hash), copy);
    } catch (err) {
      ensureRemoved(artifactsDirOf(path));
      throw err;
    } finally {
      if (body !== null && typeof body.source === "number") io.closeSync(body.source);
    }
  }

  /**
   * Replaces the file with the header and `entries` (a byte-copied fork whose lines memory does not
   * hold verbatim), as a fork written from memory is. Only under our lock: a file another writer may
   * have taken is left as it is (memory then no longer claims to match it).
   */
  rewriteWith(entries: readonly SessionEntry[]): void {
    try {
      if (this.closed) throw new TranscriptStoreError("READ_ONLY", "Session is closed");
      this.assertHeld();
    } catch {
      this.fileMatchesMemory = false; // the manager was told: it turned read-only
      return;
    }
    this.writer.writeWhole(entries);
  }

  async moveTo(header: SessionHeader): Promise<void> {
    const file = this.writer.file;
    const to = join(this.options.sessionsDir, cwdBucket(header.cwd, this.options.layout), basename(file.path));
    const headerLine = this.writer.hasHeader ? Buffer.from(`${JSON.stringify(header)}\n`) : null;
    // Inline images memory points at keep their bytes; only their offsets move with the header.
    const bodyStart = headerLine !== null && this.sources.size > 0 ? headerEndOffset(file.path) : null;
    const bodyShift = headerLine !== null && bodyStart !== null ? headerLine.length - bodyStart : 0;
    if (to === file.path) {
      // Same bucket: only the header's cwd changes (a session not written yet has no file to rewrite).
      if (headerLine !== null) {
        file.rewrite((emit) => {
          emit(headerLine);
          copyBodyOf(file.path, emit);
        });
      }
      this.sources.moved(bodyShift);
      return;
    }
    ensureParent(to, this.options);
    this.registerWithBlobs(to);
    const newLock = await acquireSessionLock(to, {
      staleMs: this.options.lockStaleMs,
      onCompromised: (err) => this.hooks.lost(err),
    });
    try {
      file.close();
      moveSessionFiles({ from: file.path, to, headerLine, fsync: this.options.fsync, warn: (w) => this.hooks.warn(w) });
    } catch (err) {
      await newLock.release();
      throw err;
    }
    const oldLock = this.lock;
    this.lock = newLock;
    file.relocate(to);
    this.sources.moved(bodyShift);
    this.artifactStore = null;
    await oldLock?.release();
  }

  async flush(): Promise<void> {
    if (this.writer.file.isOpen) this.writer.file.sync();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.writer.file.close();
    const lock = this.lock;
    this.lock = null;
    await lock?.release();
  }

  /**
   * The byte range of this file's lines after its header when they are exactly the entries in
   * memory, so a whole-session fork can copy them: a current-version file with nothing repaired,
   * migrated, malformed or deferred, no inline image memory points into; held under our lock (no
   * other writer), or opened read-only and still the very file scanned (another writer only appends
   * past what was read). Null when the fork must write its entries instead.
   */
  private copyableBody(): ForkBody | null {
    const file = this.writer.file;
    if (!this.fileMatchesMemory || this.closed) return null;
    if (headerEncryption(this.hooks.header()) !== null) return null; // encrypted lines are bound to their session
    if (!this.writer.hasHeader || this.sources.size > 0) return null;
    if (this.scanned !== null) return scannedBody(file.path, this.scanned);
    if (this.readOnly || this.lock === null) return null;
    try {
      file.openForAppend(); // learns the file's length (the lock keeps it ours)
    } catch {
      return null; // the file cannot be reopened as the one held: memory is written instead
    }
    const start = headerEndOffset(file.path);
    const end = file.byteLength;
    return start === null || start > end ? null : { source: file.path, start, end };
  }
}

/** A range of a session file's bytes (by name, or through a descriptor the fork closes) that a fork copies as its body. */
export interface ForkBody {
  source: string | number;
  start: number;
  end: number;
}

/** The body of a file opened read-only, read through a descriptor of the very file scanned. */
function scannedBody(path: string, scanned: { identity: FileIdentity; length: number }): ForkBody | null {
  const fd = openSameFile(path, scanned.identity, scanned.length);
  if (fd === null) return null;
  let start: number | null = null;
  try {
    start = headerEndOffset(fd);
  } catch {
    // unreadable head: the fork writes memory instead
  }
  if (start === null || start > scanned.length) {
    io.closeSync(fd);
    return null;
  }
  return { source: fd, start, end: scanned.length };
}

function copyBodyOf(path: string, emit: (data: Buffer) => void): void {
  const start = headerEndOffset(path);
  if (start === null) throw new TranscriptStoreError("BAD_HEADER", "Session file lost its header", { path });
  copyFileFrom(path, start, emit);
}
