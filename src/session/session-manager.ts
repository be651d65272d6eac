import { rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { ArtifactStore } from "../artifacts/artifact-store.ts";
import { registerReferrer, referrerFor } from "../blob/blob-referrers.ts";
import { BlobStore } from "../blob/blob-store.ts";
import { TranscriptStoreError, type StoreWarning } from "../errors.ts";
import { io } from "../io.ts";
import { emptyLoadReport, type LoadReport } from "../format/load-report.ts";
import { CURRENT_VERSION, isRecord, type AgentMessage, type SessionEntry, type SessionHeader } from "../format/types.ts";
import { newEntryId, uuidv7 } from "./ids.ts";
import { artifactsDirOf, cwdBucket, idFromFileName, sessionFileName } from "./paths.ts";
import { blobReader, InlineImageSources } from "./inline-image-sources.ts";
import { rehydrateValue } from "./rehydrate.ts";
import { SessionFile } from "./session-file.ts";
import { copyFileFrom, type FileIdentity, headerEndOffset, openSameFile } from "./session-file-reader.ts";
import { loadSessionFile, type LoadedSession } from "./session-loader.ts";
import { ensureSessionDir } from "./session-dirs.ts";
import { SessionWriter } from "./session-writer.ts";
import { acquireSessionLock, type SessionLock } from "./session-lock.ts";
import { linkTree } from "./artifact-dir-copy.ts";
import { listAllSessions, listSessions, resolveSession, type DiscoveryOptions } from "./discovery.ts";
import type { SessionInfo } from "./session-info.ts";
import { recoverMovesOnOpen } from "./move-recovery.ts";
import { moveSessionFiles } from "./session-move.ts";
import { resolveSessionManagerOptions, type ResolvedSessionManagerOptions, type SessionManagerOptions } from "./session-options.ts";
import { buildSessionContext, buildTree, pathToEntry, type SessionContext, type SessionTreeNode } from "./session-tree.ts";

export interface ForkOptions {
  /** Keep only the path root → this entry. @default the whole session */
  atEntryId?: string;
  /** cwd of the fork (its bucket and header). @default the source's cwd */
  cwd?: string;
}

export interface BuildContextOptions {
  /** Resolve blob refs in the returned messages (for sessions opened with `rehydrate: "lazy"`). */
  rehydrate?: boolean;
}

interface ManagerInit {
  options: ResolvedSessionManagerOptions;
  header: SessionHeader;
  entries: SessionEntry[];
  file: SessionFile | null;
  lock: SessionLock | null;
  readOnly: boolean;
  headerWritten: boolean;
  loadReport: LoadReport;
  /** Images a lazy open left inline in the file (refs in memory). @default none */
  sources?: InlineImageSources;
  /** Where blobs referenced by given entries come from when the store lacks them (a fork's source). */
  missingBlob?: (hash: string) => Buffer | null;
  /** The file's lines after its header are exactly the entries in memory (nothing to repair or migrate). @default false */
  fileMatchesMemory?: boolean;
  /** A read-only open: which file was scanned and how many of its bytes memory holds. */
  scanned?: { identity: FileIdentity; length: number };
}

/**
 * A session: its entries in memory, its JSONL file on disk (appended synchronously through the
 * prepare pipeline), its single-writer lock, its blob store and its artifacts directory.
 */
export class SessionManager {
  /** @internal */ readonly options: ResolvedSessionManagerOptions;
  readonly blobs: BlobStore;
  readonly loadReport: LoadReport;
  private _header: SessionHeader;
  private readonly entries: SessionEntry[];
  private readonly byId = new Map<string, SessionEntry>();
  private leafId: string | null;
  /** @internal */ readonly writer: SessionWriter | null;
  /** @internal */ lock: SessionLock | null;
  private readOnly: boolean;
  private closed = false;
  private artifactStore: ArtifactStore | null = null;
  /** @internal */ readonly sources: InlineImageSources;
  /** A whole-session fork may copy this file's body instead of re-writing every entry. */
  private readonly fileMatchesMemory: boolean;
  private readonly scanned: { identity: FileIdentity; length: number } | null;

  private constructor(init: ManagerInit) {
    this.fileMatchesMemory = init.fileMatchesMemory ?? false;
    this.scanned = init.scanned ?? null;
    this.sources = init.sources ?? new InlineImageSources(() => this.sessionFile);
    this.options = init.options;
    this.blobs = new BlobStore(init.options.blobsDir, { fsync: init.options.fsync });
    this._header = init.header;
    this.entries = init.entries;
    for (const entry of init.entries) this.byId.set(entry.id, entry);
    this.leafId = init.entries.length > 0 ? init.entries[init.entries.length - 1]!.id : null;
    const writerOptions = {
      prepare: init.options.prepare,
      rehydrate: init.options.rehydrate,
      missingBlob: init.missingBlob ?? ((hash: string) => this.sources.bytesOf(hash)),
      rewritten: () => this.sources.clear(),
      register: () => this.registerWithBlobs(),
      warn: (w: StoreWarning) => this.warn(w),
    };
    this.writer =
      init.file === null ? null : new SessionWriter(init.file, this.blobs, writerOptions, () => this._header, init.headerWritten);
    this.lock = init.lock;
    this.readOnly = init.readOnly;
    this.loadReport = init.loadReport;
  }

  // ---------------------------------------------------------------- factories

  /** A new session for `cwd` in the store's bucket of that cwd. */
  static async create(cwd: string, options: SessionManagerOptions = {}): Promise<SessionManager> {
    const resolved = resolveSessionManagerOptions(options);
    const created = resolved.now();
    const id = uuidv7(created.getTime());
    const path = join(resolved.sessionsDir, cwdBucket(cwd, resolved.layout), sessionFileName(created, id));
    const header: SessionHeader = { type: "session", version: CURRENT_VERSION, id, timestamp: created.toISOString(), cwd: resolve(cwd) };
    return SessionManager.startNew(path, header, resolved, null);
  }

  /** @internal Starts a brand-new session file at `path` (locks it, writes the header unless deferred). */
  static async startNew(
    path: string,
    header: SessionHeader,
    resolved: ResolvedSessionManagerOptions,
    entries: SessionEntry[] | null,
    missingBlob?: (hash: string) => Buffer | null,
    body?: ForkBody | null,
  ): Promise<SessionManager> {
    SessionManager.ensureParent(path, resolved.sessionsDir);
    const file = new SessionFile(path, { fsync: resolved.fsync, now: resolved.now });
    const init = {
      options: resolved,
      header,
      entries: [],
      file,
      lock: null,
      readOnly: false,
      headerWritten: false,
      loadReport: emptyLoadReport(),
    };
    const manager = new SessionManager({ ...init, missingBlob, fileMatchesMemory: true });
    manager.lock = await acquireSessionLock(path, {
      staleMs: resolved.lockStaleMs,
      onCompromised: (err) => manager.onLockCompromised(err),
    });
    try {
      if (entries !== null && body) {
        // The copied lines may hold blob refs: the store learns where the fork lives first.
        manager.registerWithBlobs();
        manager.writer!.writeHeaderAndBody((emit) => copyFileFrom(body.source, body.start, emit, undefined, body.end));
        for (const entry of entries) manager.remember(entry);
      } else if (entries !== null) {
        manager.writer!.writeWhole(entries);
        for (const entry of entries) manager.remember(entry);
      } else if (!resolved.deferUntilAssistant) {
        manager.writer!.writeHeader();
      }
    } catch (err) {
      await manager.close();
      throw err;
    }
    return manager;
  }

  /**
   * Opens a session file: scans it, migrates it, and (unless `readOnly`) takes its lock, repairs a
   * torn tail into quarantine and rewrites a legacy file as v3. An absent or empty file becomes a
   * new session; a file without a valid header is never overwritten (`BAD_HEADER`).
   */
  static async open(path: string, options: SessionManagerOptions = {}): Promise<SessionManager> {
    const resolved = resolveSessionManagerOptions(options);
    const abs = resolve(path);
    const readOnly = resolved.readOnly;
    let lock: SessionLock | null = null;
    let manager: SessionManager | null = null;
    const holder: { manager: SessionManager | null } = { manager: null };
    if (!readOnly) {
      SessionManager.ensureParent(abs, resolved.sessionsDir);
      lock = await acquireSessionLock(abs, {
        staleMs: resolved.lockStaleMs,
        onCompromised: (err) => holder.manager?.onLockCompromised(err),
      });
    }
    try {
      await recoverMovesOnOpen(abs, { readOnly, lockStaleMs: resolved.lockStaleMs });
      const blobs = new BlobStore(resolved.blobsDir, { fsync: resolved.fsync });
      const warn = (w: StoreWarning) => resolved.onWarning({ ...w, path: w.path ?? abs });
      const sources = new InlineImageSources(() => holder.manager?.sessionFile ?? abs);
      const loaded = loadSessionFile(abs, {
        rehydrate: resolved.rehydrate,
        blobThreshold: resolved.prepare.blobThreshold,
        chunkSize: resolved.chunkSize,
        blobs,
        sources,
        warn,
        writable: !readOnly,
        fsync: resolved.fsync,
      });
      const file = new SessionFile(abs, { fsync: resolved.fsync, now: resolved.now });
      if (loaded === null) {
        if (readOnly) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session at ${abs}`, { path: abs });
        const created = resolved.now();
        const id = idFromFileName(abs) ?? uuidv7(created.getTime());
        const header: SessionHeader = {
          type: "session",
          version: CURRENT_VERSION,
          id,
          timestamp: created.toISOString(),
          cwd: resolve(resolved.cwd ?? process.cwd()),
        };
        manager = new SessionManager({
          options: resolved,
          header,
          entries: [],
          file,
          lock,
          readOnly,
          headerWritten: false,
          loadReport: emptyLoadReport(),
        });
        holder.manager = manager;
        if (!resolved.deferUntilAssistant) manager.writer!.writeWhole([]);
        return manager;
      }
      manager = new SessionManager({
        options: resolved,
        header: loaded.header,
        entries: loaded.entries,
        file,
        lock,
        readOnly,
        headerWritten: true,
        loadReport: loaded.report,
        sources,
        fileMatchesMemory: isCleanCurrentFile(loaded),
        scanned:
          readOnly && loaded.parsed.identity !== null
            ? { identity: loaded.parsed.identity, length: loaded.parsed.completeLength }
            : undefined,
      });
      holder.manager = manager;
      if (!readOnly) {
        // A session written before the store kept a registry of referrers gets registered here.
        if (loaded.hasBlobRefs) manager.registerWithBlobs();
        manager.writer!.repairOnOpen(loaded, loaded.entries, (w) => manager!.warn(w));
      }
      return manager;
    } catch (err) {
      if (manager !== null) await manager.close();
      else await lock?.release();
      throw err;
    }
  }

  /** A session that lives only in memory: appends work, nothing is written. */
  static inMemory(cwd: string = process.cwd(), options: SessionManagerOptions = {}): SessionManager {
    const resolved = resolveSessionManagerOptions(options);
    const created = resolved.now();
    const header: SessionHeader = {
      type: "session",
      version: CURRENT_VERSION,
      id: uuidv7(created.getTime()),
      timestamp: created.toISOString(),
      cwd: resolve(cwd),
    };
    return new SessionManager({
      options: resolved,
      header,
      entries: [],
      file: null,
      lock: null,
      readOnly: false,
      headerWritten: true,
      loadReport: emptyLoadReport(),
    });
  }

  /** The most recent session of `cwd`, or a new one when there is none. */
  static async continueRecent(cwd: string, options: SessionManagerOptions = {}): Promise<SessionManager> {
    const resolved = resolveSessionManagerOptions(options);
    const sessions = await listSessions(cwd, { sessionsDir: resolved.sessionsDir, layout: resolved.layout, onWarning: resolved.onWarning });
    for (const info of sessions) {
      try {
        return await SessionManager.open(info.path, options);
      } catch (err) {
        // A file that turned out unreadable is skipped; a live writer's session is not ours to take.
        if (err instanceof TranscriptStoreError && err.code === "BAD_HEADER") continue;
        throw err;
      }
    }
    return SessionManager.create(cwd, options);
  }

  /**
   * Forks the session stored at `sourcePath` into `cwd`. The source is only read (never locked or
   * written), so this works while another process is appending to it.
   */
  static async forkFrom(sourcePath: string, cwd: string, options: SessionManagerOptions & ForkOptions = {}): Promise<SessionManager> {
    const { atEntryId, cwd: _ignored, ...rest } = options;
    const source = await SessionManager.open(sourcePath, { ...rest, readOnly: true });
    try {
      return await source.forkWith({ atEntryId, cwd }, resolveSessionManagerOptions({ ...rest, readOnly: false }));
    } finally {
      await source.close();
    }
  }

  /** Sessions of `cwd`, newest first, read from each file's head and tail. */
  static async list(cwd: string, options: SessionManagerOptions & DiscoveryOptions = {}): Promise<SessionInfo[]> {
    const resolved = resolveSessionManagerOptions(options);
    return listSessions(cwd, {
      sessionsDir: resolved.sessionsDir,
      layout: resolved.layout,
      roots: options.roots,
      onWarning: resolved.onWarning,
    });
  }

  /** Every session of the store (and of `roots`), newest first. */
  static async listAll(options: SessionManagerOptions & DiscoveryOptions = {}): Promise<SessionInfo[]> {
    const resolved = resolveSessionManagerOptions(options);
    return listAllSessions({
      sessionsDir: resolved.sessionsDir,
      layout: resolved.layout,
      roots: options.roots,
      onWarning: resolved.onWarning,
    });
  }

  /** One session by id prefix, file-name prefix or file-name id: local bucket first, then all. */
  static async resolve(arg: string, cwd: string, options: SessionManagerOptions & DiscoveryOptions = {}): Promise<SessionInfo> {
    const resolved = resolveSessionManagerOptions(options);
    return resolveSession(arg, cwd, {
      sessionsDir: resolved.sessionsDir,
      layout: resolved.layout,
      roots: options.roots,
      onWarning: resolved.onWarning,
    });
  }

  private static ensureParent(path: string, sessionsDir: string): void {
    ensureSessionDir(dirname(path), sessionsDir);
  }

  // ---------------------------------------------------------------- identity

  get header(): SessionHeader {
    return this._header;
  }
  get sessionId(): string {
    return this._header.id;
  }
  get cwd(): string {
    return this._header.cwd;
  }
  /** The session file path, or null for an in-memory session. */
  get sessionFile(): string | null {
    return this.writer?.file.path ?? null;
  }
  /** The artifacts directory (the session path without `.jsonl`), or null in memory. */
  get artifactsDir(): string | null {
    const path = this.sessionFile;
    return path === null ? null : artifactsDirOf(path);
  }
  /** The session's ArtifactStore, or null for an in-memory session. */
  get artifacts(): ArtifactStore | null {
    const dir = this.artifactsDir;
    if (dir === null) return null;
    if (this.artifactStore === null || this.artifactStore.dir !== dir)
      this.artifactStore = new ArtifactStore(dir, { onWarning: this.options.onWarning, fsync: this.options.fsync });
    return this.artifactStore;
  }
  /** True when appends are refused (opened read-only, lock lost, or closed). */
  get isReadOnly(): boolean {
    return this.readOnly || this.closed;
  }

  // ---------------------------------------------------------------- appends

  /** Appends a chat message; returns the new entry id. */
  appendMessage(message: AgentMessage): string {
    if (!isRecord(message) || typeof message.role !== "string")
      throw new TranscriptStoreError("INVALID_OPTION", "message must be an object with a string role");
    return this.appendEntry({ type: "message", message });
  }

  /** Appends any entry type (custom ones included). `id` and `parentId` are assigned here. */
  appendEntry(fields: { type: string; [key: string]: unknown }): string {
    if (!isRecord(fields) || typeof fields.type !== "string" || fields.type.length === 0)
      throw new TranscriptStoreError("INVALID_OPTION", "entry fields need a non-empty string type");
    if (fields.type === "session") throw new TranscriptStoreError("INVALID_OPTION", 'entry type "session" is reserved for the header');
    this.assertWritable();
    this.lock?.assertHeld();
    const { type, id: _id, parentId: _parentId, timestamp, ...rest } = fields;
    const entry: SessionEntry = {
      type,
      id: newEntryId(this.byId),
      parentId: this.leafId,
      timestamp: typeof timestamp === "string" ? timestamp : this.options.now().toISOString(),
      ...rest,
    };
    const kept = this.writer === null ? entry : this.writer.persist(entry);
    this.remember(kept);
    return entry.id;
  }

  appendModelChange(model: unknown, role?: string): string {
    return this.appendEntry(role === undefined ? { type: "model_change", model } : { type: "model_change", model, role });
  }

  appendThinkingLevelChange(level: string): string {
    return this.appendEntry({ type: "thinking_level_change", thinkingLevel: level });
  }

  appendCompaction(summary: string, firstKeptEntryId: string, tokensBefore: number, details?: unknown): string {
    this.requireEntry(firstKeptEntryId);
    const fields: { type: string; [key: string]: unknown } = { type: "compaction", summary, firstKeptEntryId, tokensBefore };
    if (details !== undefined) fields.details = details;
    return this.appendEntry(fields);
  }

  appendCustomEntry(customType: string, data?: unknown): string {
    const fields: { type: string; [key: string]: unknown } = { type: "custom", customType };
    if (data !== undefined) fields.data = data;
    return this.appendEntry(fields);
  }

  appendLabelChange(targetId: string, label: string | undefined): string {
    this.requireEntry(targetId);
    return this.appendEntry({ type: "label", targetId, label });
  }

  /** Moves the leaf to `fromId` (null: before the root) and records a summary of the abandoned branch. */
  branchWithSummary(fromId: string | null, summary: string): string {
    if (fromId !== null) this.requireEntry(fromId);
    this.assertWritable();
    const previousLeaf = this.leafId;
    this.leafId = fromId;
    try {
      return this.appendEntry({ type: "branch_summary", fromId: fromId ?? "root", summary });
    } catch (err) {
      this.leafId = previousLeaf;
      throw err;
    }
  }

  // ---------------------------------------------------------------- tree

  /** All entries in file order (a snapshot: later appends do not change the returned array). */
  getEntries(): SessionEntry[] {
    return this.entries.slice();
  }
  getEntry(id: string): SessionEntry | undefined {
    return this.byId.get(id);
  }
  getLeafId(): string | null {
    return this.leafId;
  }
  /** Makes `id` the leaf: the next append becomes its child. */
  branch(id: string): void {
    this.requireEntry(id);
    this.leafId = id;
  }
  /** Moves the leaf before the root: the next append starts a new root. */
  resetLeaf(): void {
    this.leafId = null;
  }
  /** Entries from the root to `fromId` (default: the leaf). */
  getBranch(fromId?: string): SessionEntry[] {
    if (fromId !== undefined) this.requireEntry(fromId);
    return pathToEntry(this.byId, fromId ?? this.leafId);
  }
  getTree(): SessionTreeNode[] {
    return buildTree(this.entries, this.byId);
  }
  /** The messages, model and thinking level at the leaf, honouring the latest compaction. */
  buildContext(options: BuildContextOptions = {}): SessionContext {
    const context = buildSessionContext(this.getBranch(), this._header);
    if (!options.rehydrate) return context;
    return { ...context, messages: context.messages.map((m) => this.rehydrate(m)) };
  }
  /** Resolves blob refs in any value back to their original strings (missing blobs warn). */
  rehydrate<T>(value: T): T {
    return rehydrateValue(value, blobReader(this.blobs, this.sources), (w) => this.warn(w));
  }

  // ---------------------------------------------------------------- fork and move

  /**
   * A new session (new id, header `parentSession` = this id) with the same entries and ids, or
   * only root → `atEntryId`; its artifacts directory is a hard-linked copy of this one's. This
   * manager is unchanged.
   */
  async fork(options: ForkOptions = {}): Promise<SessionManager> {
    return this.forkWith(options, { ...this.options, readOnly: false });
  }

  private async forkWith(options: ForkOptions, resolved: ResolvedSessionManagerOptions): Promise<SessionManager> {
    const entries = options.atEntryId !== undefined ? this.getBranch(options.atEntryId) : this.entries.slice();
    const created = resolved.now();
    const id = uuidv7(created.getTime());
    const cwd = resolve(options.cwd ?? this.cwd);
    const { type: _t, version: _v, id: _id, timestamp: _ts, cwd: _c, parentSession: _p, ...extra } = this._header;
    const header: SessionHeader = {
      type: "session",
      version: CURRENT_VERSION,
      id,
      timestamp: created.toISOString(),
      cwd,
      parentSession: this.sessionId,
      ...extra,
    };
    const path = join(resolved.sessionsDir, cwdBucket(cwd, resolved.layout), sessionFileName(created, id));
    const sourceArtifacts = this.artifactsDir;
    if (sourceArtifacts !== null) {
      SessionManager.ensureParent(path, resolved.sessionsDir);
      linkTree(sourceArtifacts, artifactsDirOf(path), (w) => resolved.onWarning(w));
    }
    const body = options.atEntryId === undefined ? this.copyableBody() : null;
    try {
      return await SessionManager.startNew(path, header, resolved, entries, (hash) => this.sources.bytesOf(hash), body);
    } catch (err) {
      ensureRemoved(artifactsDirOf(path));
      throw err;
    } finally {
      if (body !== null && typeof body.source === "number") io.closeSync(body.source);
    }
  }

  /**
   * Moves the session file and its artifacts directory into `newCwd`'s bucket and records the new
   * cwd in the header, all or nothing. The lock of the new path is taken before anything moves
   * and the old one released only after, so no other writer can slip in.
   */
  async moveTo(newCwd: string): Promise<void> {
    this.assertWritable();
    this.lock?.assertHeld();
    const file = this.writer?.file ?? null;
    if (file === null) throw new TranscriptStoreError("NO_SESSION", "An in-memory session has no files to move");
    const cwd = resolve(newCwd);
    const to = join(this.options.sessionsDir, cwdBucket(cwd, this.options.layout), basename(file.path));
    const header: SessionHeader = { ...this._header, cwd };
    const headerLine = this.writer!.hasHeader ? Buffer.from(`${JSON.stringify(header)}\n`) : null;
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
      this._header = header;
      this.sources.moved(bodyShift);
      return;
    }
    SessionManager.ensureParent(to, this.options.sessionsDir);
    this.registerWithBlobs(to);
    const newLock = await acquireSessionLock(to, {
      staleMs: this.options.lockStaleMs,
      onCompromised: (err) => this.onLockCompromised(err),
    });
    try {
      file.close();
      moveSessionFiles({ from: file.path, to, headerLine, fsync: this.options.fsync, warn: (w) => this.warn(w) });
    } catch (err) {
      await newLock.release();
      throw err;
    }
    const oldLock = this.lock;
    this.lock = newLock;
    file.relocate(to);
    this._header = header;
    this.sources.moved(bodyShift);
    this.artifactStore = null;
    await oldLock?.release();
  }

  /**
   * The byte range of this file's lines after its header when they are exactly the entries in
   * memory, so a whole-session fork can copy them: a current-version file with nothing repaired,
   * migrated, malformed or deferred, no inline image memory points into; held under our lock (no
   * other writer), or opened read-only and still the very file scanned (another writer only appends
   * past what was read). Null when the fork must write its entries instead.
   */
  private copyableBody(): ForkBody | null {
    const file = this.writer?.file;
    if (file === undefined || !this.fileMatchesMemory || this.closed) return null;
    if (!this.writer!.hasHeader || this.sources.size > 0) return null;
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

  // ---------------------------------------------------------------- lifecycle

  /** Data-syncs everything appended so far. */
  async flush(): Promise<void> {
    if (this.writer?.file.isOpen) this.writer.file.sync();
  }

  /** Closes the file and releases the lock. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.writer?.file.close();
    const lock = this.lock;
    this.lock = null;
    await lock?.release();
  }

  // ---------------------------------------------------------------- internals

  private warn(warning: StoreWarning): void {
    const path = warning.path ?? this.sessionFile ?? undefined;
    this.options.onWarning(path === undefined ? warning : { ...warning, path });
  }

  /** Records in the blob store where this session lives (gc marks every registered place). */
  private registerWithBlobs(path: string | null = this.sessionFile): void {
    if (path !== null) registerReferrer(this.options.blobsDir, referrerFor(path, this.options.sessionsDir));
  }

  private onLockCompromised(err: Error): void {
    this.readOnly = true;
    this.warn({ code: "LOCK_COMPROMISED", message: `Session lock lost (${err.message}); the session is now read-only` });
  }

  private requireEntry(id: string): SessionEntry {
    const entry = this.byId.get(id);
    if (entry === undefined)
      throw new TranscriptStoreError("ENTRY_NOT_FOUND", `No entry with id ${JSON.stringify(id)} in session ${this.sessionId}`);
    return entry;
  }

  private assertWritable(): void {
    if (this.closed) throw new TranscriptStoreError("READ_ONLY", "Session is closed", { path: this.sessionFile ?? undefined });
    if (this.readOnly) throw new TranscriptStoreError("READ_ONLY", "Session is read-only", { path: this.sessionFile ?? undefined });
  }

  private remember(entry: SessionEntry): void {
    this.entries.push(entry);
    this.byId.set(entry.id, entry);
    this.leafId = entry.id;
  }
}

/** A range of a session file's bytes (by name, or through a descriptor the fork closes) that a fork copies as its body. */
interface ForkBody {
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

/** Nothing of the file was left out of memory, changed on reading, or is waiting to be repaired. */
function isCleanCurrentFile(loaded: LoadedSession): boolean {
  const { parsed, report } = loaded;
  return (
    report.migratedFrom === null &&
    report.malformed.length === 0 &&
    report.repaired.length === 0 &&
    report.nulRuns === 0 &&
    parsed.tornTail === null &&
    !parsed.missingFinalNewline
  );
}

function ensureRemoved(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // best effort: a leftover copy of artifacts is harmless
  }
}

function copyBodyOf(path: string, emit: (data: Buffer) => void): void {
  const start = headerEndOffset(path);
  if (start === null) throw new TranscriptStoreError("BAD_HEADER", "Session file lost its header", { path });
  copyFileFrom(path, start, emit);
}
