import { checkPlainSession, storeRequiresEncryption } from "./encryption-policy.ts";
import { resolve } from "node:path";
import type { ArtifactStore } from "../artifacts/artifact-store.ts";
import { TranscriptStoreError, type StoreWarning } from "../errors.ts";
import { io } from "../io.ts";
import { emptyLoadReport as emptyReport, type LoadReport } from "../format/load-report.ts";
import { currentLabels, extractPath } from "../format/extract-path.ts";
import { CURRENT_VERSION, isRecord, type AgentMessage, type SessionEntry, type SessionHeader } from "../format/types.ts";
import { isoTime } from "../format/iso-time.ts";
import { backendOf } from "../storage/backends.ts";
import { applyLifecycle, type LifecycleListOptions } from "../lifecycle/listing-flags.ts";
import { MemorySessionStorage } from "../storage/memory-session.ts";
import { incognitoSession } from "../storage/incognito-session.ts";
import type { Blobs, OpenedSession, SessionStorage, StoreGcOptions, StoreGcReport } from "../storage/session-storage.ts";
import { DeferredTree, type EntryTree } from "./entry-tree.ts";
import { forkHeader } from "./fork-header.ts";
import { newEntryId, uuidv7 } from "./ids.ts";
import { artifactsDirOf } from "./paths.ts";
import { rehydrateValue } from "./rehydrate.ts";
import type { DiscoveryOptions } from "./discovery.ts";
import type { SessionInfo } from "./session-info.ts";
import { newHeaderEncryption, withProvidedKey } from "./encryption-options.ts";
import {
  resolveSessionManagerOptions,
  withStoreSettings,
  rootOf,
  systemNow,
  type ResolvedSessionManagerOptions,
  type SessionManagerOptions,
} from "./session-options.ts";
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

/**
 * A session: its entries in memory, persisted through its storage (a JSONL file appended
 * synchronously through the prepare pipeline, or PostgreSQL rows), its single writer, its blob
 * store and its artifacts.
 */
export class SessionManager {
  /** @internal */ readonly options: ResolvedSessionManagerOptions;
  readonly loadReport: LoadReport;
  /** @internal */ readonly storage: SessionStorage;
  private _header: SessionHeader;
  /** Entries, ids and leaf: read through `loaded()` (a byte-copied fork reads its file on first need). */
  private readonly tree: DeferredTree;
  private readOnly: boolean;
  private closed = false;
  private storageClosed = false;

  private constructor(options: ResolvedSessionManagerOptions, session: OpenedSession) {
    this.options = options;
    this._header = session.header;
    this.tree = new DeferredTree(session.entries);
    this.readOnly = options.readOnly;
    this.loadReport = session.loadReport;
    this.storage = session.storage({
      warn: (w) => this.warn(w),
      lost: (err) => this.onLockCompromised(err),
      header: () => this._header,
    });
  }

  // ---------------------------------------------------------------- factories

  /** A new session for `cwd` (in the store's bucket of that cwd, or a new row set in the database). */
  static async create(cwd: string, options: SessionManagerOptions = {}): Promise<SessionManager> {
    let resolved = withStoreSettings(options, resolveSessionManagerOptions(options), true);
    const created = resolved.now();
    const id = uuidv7(created.getTime());
    const header: SessionHeader = { type: "session", version: CURRENT_VERSION, id, timestamp: created.toISOString(), cwd: resolve(cwd) };
    if (resolved.encryption !== null) {
      // The header names the key in clear; every entry line is encrypted (line-cipher.ts).
      const encryption = newHeaderEncryption(resolved.encryption);
      resolved = { ...resolved, encryption: await withProvidedKey(resolved.encryption, encryption) };
      header.encryption = encryption;
    }
    if (resolved.incognito) return new SessionManager(resolved, incognitoSession(header, [], resolved));
    if (resolved.encryption === null && storeRequiresEncryption(rootOf(resolved.original))) {
      throw new TranscriptStoreError("KEY_REQUIRED", "This store requires encryption (config.json encryption.require): pass encryption");
    }
    return new SessionManager(resolved, await backendOf(resolved).create(header, resolved));
  }

  /**
   * Opens a session (a file path, or a session id): scans it, migrates it, and (unless
   * `readOnly`) takes its single-writer lock, repairs a torn tail into quarantine and rewrites a
   * legacy file as v3. In the file store a whole session id (no file of that name in the working
   * directory) opens the stored session, or fails `SESSION_NOT_FOUND`; a path opens that path,
   * where an absent or empty file becomes a new session; a file without a valid header is never
   * overwritten (`BAD_HEADER`).
   */
  static async open(pathOrId: string, options: SessionManagerOptions = {}): Promise<SessionManager> {
    let resolved = withStoreSettings(options, resolveSessionManagerOptions(options), false);
    refuseIncognito(resolved, "open");
    const path = resolved.store === null ? await storedPathOf(pathOrId, resolved) : pathOrId;
    if (resolved.encryption !== null && resolved.store === null) {
      resolved = { ...resolved, encryption: await withProvidedKey(resolved.encryption, { path: resolve(path) }) };
    }
    const opened = await backendOf(resolved).open(path, resolved);
    // downgrade by replacement: a plain session where a key was given or encryption is required
    try {
      checkPlainSession(opened.header, resolved.encryption, rootOf(resolved.original), resolved.onWarning, path);
    } catch (err) {
      await opened.storage({ warn: () => {}, lost: () => {}, header: () => opened.header }).close();
      throw err;
    }
    return new SessionManager(resolved, opened);
  }

  /** @internal A manager over a session a backend already created or opened (import, tools). */
  static adopt(session: OpenedSession, resolved: ResolvedSessionManagerOptions): SessionManager {
    return new SessionManager(resolved, session);
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
    const storage = new MemorySessionStorage(resolved);
    return new SessionManager({ ...resolved, readOnly: false }, { header, entries: [], loadReport: emptyReport(), storage: () => storage });
  }

  /** The most recent session of `cwd`, or a new one when there is none. */
  static async continueRecent(cwd: string, options: SessionManagerOptions = {}): Promise<SessionManager> {
    const resolved = resolveSessionManagerOptions(options);
    refuseIncognito(resolved, "continueRecent");
    refuseEmptyCwd(cwd, "continueRecent");
    const backend = backendOf(resolved);
    // Archived and trashed sessions are not resumed: they stay openable by id or path.
    const sessions = await applyLifecycle(await backend.list(cwd, resolved), backend, resolved);
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
   * written), so this works while another process is appending to it. A whole clean session file is
   * copied byte for byte without being parsed; the fork reads its own file when first needed.
   */
  static async forkFrom(sourcePath: string, cwd: string, options: SessionManagerOptions & ForkOptions = {}): Promise<SessionManager> {
    const { atEntryId, cwd: _ignored, ...rest } = options;
    const given = resolveSessionManagerOptions(rest);
    refuseIncognito(given, "forkFrom");
    // An encrypted session's lines are bound to it: its fork is written from its entries, never byte-copied.
    // (a store that requires encryption opens the source below, where a plain one is refused)
    if (atEntryId === undefined && rest.encryption === undefined && !storeRequiresEncryption(rootOf(given.original))) {
      // The fork's own options are the given ones made writable: nothing else resolved depends on readOnly (not
      // resolved twice: that read the sessions directory twice to detect its layout, and made a store URL's backend twice).
      const resolved: ResolvedSessionManagerOptions = { ...given, readOnly: false, original: { ...rest, readOnly: false } };
      const copied = await backendOf(resolved).forkWhole?.(sourcePath, cwd, resolved);
      if (copied) return new SessionManager(resolved, copied);
    }
    const source = await SessionManager.open(sourcePath, { ...rest, readOnly: true });
    try {
      return await source.forkWith({ atEntryId, cwd }, resolveSessionManagerOptions({ ...rest, readOnly: false }));
    } finally {
      await source.close();
    }
  }

  /**
   * Sessions of `cwd`, newest first (files: read from each file's head and tail). Archived sessions
   * are left out unless `includeArchived`; pinned and archived ones are marked.
   */
  static async list(cwd: string, options: SessionManagerOptions & DiscoveryOptions & LifecycleListOptions = {}): Promise<SessionInfo[]> {
    refuseEmptyCwd(cwd, "list");
    const resolved = resolveSessionManagerOptions(options);
    const backend = backendOf(resolved);
    return applyLifecycle(await backend.list(cwd, { ...resolved, ...listingOf(options) }), backend, resolved, options);
  }

  /** Every session of the store (and of `roots`), newest first; archived ones only with `includeArchived`. */
  static async listAll(options: SessionManagerOptions & DiscoveryOptions & LifecycleListOptions = {}): Promise<SessionInfo[]> {
    const resolved = resolveSessionManagerOptions(options);
    const backend = backendOf(resolved);
    return applyLifecycle(await backend.list(null, { ...resolved, ...listingOf(options) }), backend, resolved, options);
  }

  /**
   * One session by id prefix, file-name prefix or file-name id: the bucket of `cwd` first, then
   * all; without a `cwd`, store-wide (an empty `cwd` is refused: it names no directory).
   */
  static async resolve(arg: string, cwd?: string, options: SessionManagerOptions & DiscoveryOptions = {}): Promise<SessionInfo> {
    if (cwd !== undefined) refuseEmptyCwd(cwd, "resolve");
    const resolved = resolveSessionManagerOptions(options);
    return backendOf(resolved).resolve(arg, cwd, { ...resolved, ...listingOf(options) });
  }

  /** Deletes the store's blobs that no session references and that are older than the grace period. */
  static async gc(options: SessionManagerOptions & StoreGcOptions = {}): Promise<StoreGcReport> {
    const { graceMs, dryRun, ...rest } = options;
    const resolved = resolveSessionManagerOptions(rest);
    return backendOf(resolved).gc(resolved, { graceMs, dryRun });
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
  /** The session file path, or null for an in-memory session or one stored in a database. */
  get sessionFile(): string | null {
    return this.storage.path;
  }
  /** Where the session lives: its file path, or `<database>#<id>`; null in memory. */
  get location(): string | null {
    return this.storage.location;
  }
  /** The artifacts directory (the session path without `.jsonl`), or null when not in a file. */
  get artifactsDir(): string | null {
    const path = this.sessionFile;
    return path === null ? null : artifactsDirOf(path);
  }
  /** The session's artifacts, or null for an in-memory session. */
  get artifacts(): ArtifactStore | null {
    return this.storage.artifacts();
  }
  /** The blob store this session's refs point into. */
  get blobs(): Blobs {
    return this.storage.blobs;
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
    // What appendEntry({ type: "message", message }) builds, as one literal: the rest/spread copy of
    // the generic path costs about a fifth of building and serializing a short text entry.
    const tree = this.writableTree();
    return this.commit({
      type: "message",
      id: newEntryId(tree.byId),
      parentId: tree.leafId,
      timestamp: this.entryTimestamp(),
      message,
    });
  }

  /** Appends any entry type (custom ones included). `id` and `parentId` are assigned here. */
  appendEntry(fields: { type: string; [key: string]: unknown }): string {
    if (!isRecord(fields) || typeof fields.type !== "string" || fields.type.length === 0)
      throw new TranscriptStoreError("INVALID_OPTION", "entry fields need a non-empty string type");
    if (fields.type === "session") throw new TranscriptStoreError("INVALID_OPTION", 'entry type "session" is reserved for the header');
    const tree = this.writableTree();
    const { type, id: _id, parentId: _parentId, timestamp, ...rest } = fields;
    return this.commit({
      type,
      id: newEntryId(tree.byId),
      parentId: tree.leafId,
      timestamp: typeof timestamp === "string" ? timestamp : this.entryTimestamp(),
      ...rest,
    });
  }

  /** The loaded tree of a session this manager may append to (else READ_ONLY / the lock's error). */
  private writableTree(): EntryTree {
    this.assertWritable();
    this.storage.assertHeld();
    return this.loaded();
  }

  /** A new entry's `timestamp`: the clock's time as ISO 8601 (the system clock read without building a `Date`). */
  private entryTimestamp(): string {
    const now = this.options.now;
    return isoTime(now === systemNow ? Date.now() : now().getTime());
  }

  /** Persists a built entry, then adds what was kept to the tree; returns its id. */
  private commit(entry: SessionEntry): string {
    const kept = this.storage.persist(entry);
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
    const tree = this.loaded();
    const previousLeaf = tree.leafId;
    tree.leafId = fromId;
    try {
      return this.appendEntry({ type: "branch_summary", fromId: fromId ?? "root", summary });
    } catch (err) {
      tree.leafId = previousLeaf;
      throw err;
    }
  }

  // ---------------------------------------------------------------- tree

  /** All entries in file order (a snapshot: later appends do not change the returned array). */
  getEntries(): SessionEntry[] {
    return this.loaded().entries.slice();
  }
  getEntry(id: string): SessionEntry | undefined {
    return this.loaded().byId.get(id);
  }
  getLeafId(): string | null {
    return this.loaded().leafId;
  }
  /** Makes `id` the leaf: the next append becomes its child. */
  branch(id: string): void {
    this.requireEntry(id);
    this.loaded().leafId = id;
  }
  /** Moves the leaf before the root: the next append starts a new root. */
  resetLeaf(): void {
    this.loaded().leafId = null;
  }
  /** Entries from the root to `fromId` (default: the leaf). */
  getBranch(fromId?: string): SessionEntry[] {
    if (fromId !== undefined) this.requireEntry(fromId);
    const tree = this.loaded();
    return pathToEntry(tree.byId, fromId ?? tree.leafId);
  }
  getTree(): SessionTreeNode[] {
    const tree = this.loaded();
    return buildTree(tree.entries, tree.byId);
  }
  /** The messages, model and thinking level at the leaf, honouring the latest compaction. */
  buildContext(options: BuildContextOptions = {}): SessionContext {
    const context = buildSessionContext(this.getBranch(), this._header);
    if (!options.rehydrate) return context;
    return { ...context, messages: context.messages.map((m) => this.rehydrate(m)) };
  }
  /** Resolves blob refs in any value back to their original strings (missing blobs warn). */
  rehydrate<T>(value: T): T {
    return rehydrateValue(value, this.storage.blobReader, (w) => this.warn(w));
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
    const whole = options.atEntryId === undefined;
    // One path out of the tree keeps its references inside the new file (labels re-created, re-chained).
    const entries = whole
      ? this.loaded().entries.slice()
      : extractPath(this.getBranch(options.atEntryId), currentLabels(this.loaded().entries), newEntryId);
    const header = forkHeader(this._header, options.cwd ?? this.cwd, resolved.now());
    const forked = await this.storage.fork({ header, entries, whole: whole && !this.closed, options: resolved });
    return new SessionManager(resolved, forked);
  }

  /**
   * Moves the session (its file and artifacts directory into `newCwd`'s bucket, or its rows) and
   * records the new cwd in the header, all or nothing. The single writer of the new place is
   * secured before anything moves and the old one released only after, so no other writer can slip in.
   */
  async moveTo(newCwd: string): Promise<void> {
    this.assertWritable();
    this.storage.assertHeld();
    this.loaded(); // a byte-copied fork settles its file before it moves
    const header: SessionHeader = { ...this._header, cwd: resolve(newCwd) };
    await this.storage.moveTo(header);
    this._header = header;
  }

  // ---------------------------------------------------------------- lifecycle

  /** Resolves when everything appended so far is durable: data-synced (file) or committed (database). */
  async flush(): Promise<void> {
    await this.storage.flush();
  }

  /** Flushes, closes the file or connection and releases the single writer. Idempotent. */
  async close(): Promise<void> {
    this.closed = true; // no append from here on, even when closing fails below
    if (this.storageClosed) return;
    // A database store that cannot commit what is queued rejects and keeps it: close() again retries.
    await this.storage.close();
    this.storageClosed = true;
  }

  // ---------------------------------------------------------------- internals

  private warn(warning: StoreWarning): void {
    const path = warning.path ?? this.sessionFile ?? undefined;
    this.options.onWarning(path === undefined ? warning : { ...warning, path });
  }

  private onLockCompromised(err: Error): void {
    this.readOnly = true;
    this.warn({ code: "LOCK_COMPROMISED", message: `Session lock lost (${err.message}); the session is now read-only` });
  }

  /** The entries in memory (a byte-copied fork reads its own file the first time). */
  private loaded(): EntryTree {
    return this.tree.get();
  }

  private requireEntry(id: string): SessionEntry {
    const entry = this.loaded().byId.get(id);
    if (entry === undefined)
      throw new TranscriptStoreError("ENTRY_NOT_FOUND", `No entry with id ${JSON.stringify(id)} in session ${this.sessionId}`);
    return entry;
  }

  private assertWritable(): void {
    if (this.closed) throw new TranscriptStoreError("READ_ONLY", "Session is closed", { path: this.sessionFile ?? undefined });
    if (this.readOnly) throw new TranscriptStoreError("READ_ONLY", "Session is read-only", { path: this.sessionFile ?? undefined });
  }

  private remember(entry: SessionEntry): void {
    const tree = this.loaded();
    tree.entries.push(entry);
    tree.byId.set(entry.id, entry);
    tree.leafId = entry.id;
  }
}

/** An incognito session is only ever new: opening, resuming or forking a stored one would read (and lock) the store. */
/** A whole session id (a UUID), as `open` takes one in place of a path. */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The file `open` opens in the file store: for a whole session id with no file of that name in
 * the working directory, the stored session's file (`SESSION_NOT_FOUND` when there is none);
 * anything else is a path.
 */
async function storedPathOf(pathOrId: string, resolved: ResolvedSessionManagerOptions): Promise<string> {
  if (!SESSION_ID.test(pathOrId) || io.existsSync(pathOrId)) return pathOrId;
  const info = await backendOf(resolved).resolve(pathOrId, undefined, resolved);
  if (info.id.toLowerCase() !== pathOrId.toLowerCase())
    throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session has the id ${pathOrId}`);
  return info.path;
}

function refuseIncognito(resolved: ResolvedSessionManagerOptions, factory: string): void {
  if (resolved.incognito) throw new TranscriptStoreError("INVALID_OPTION", `incognito sessions are made with create(), not ${factory}()`);
}

/** `""` names no directory: resolving it would list (or resume) whatever was filed under this process's cwd. */
function refuseEmptyCwd(cwd: unknown, factory: string): void {
  if (typeof cwd !== "string" || cwd === "")
    throw new TranscriptStoreError("INVALID_OPTION", `${factory}() needs a cwd, got ${JSON.stringify(cwd)}`);
}

/** What a listing takes beyond the store's options: extra roots and the index it may answer from (checked here). */
function listingOf(options: DiscoveryOptions): DiscoveryOptions {
  const { listIndex, indexPath } = options;
  if (listIndex !== undefined && listIndex !== "auto" && listIndex !== "create" && listIndex !== "off")
    throw new TranscriptStoreError("INVALID_OPTION", `listIndex must be "auto", "create" or "off", got ${String(listIndex)}`);
  if (indexPath !== undefined && (typeof indexPath !== "string" || indexPath.length === 0))
    throw new TranscriptStoreError("INVALID_OPTION", "indexPath must be a non-empty string");
  return { roots: options.roots, listIndex, indexPath };
}
