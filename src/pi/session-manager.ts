import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { TranscriptStoreError } from "../errors.ts";
import { extractPath } from "../format/extract-path.ts";
import { isoTime } from "../format/iso-time.ts";
import { ensureDir } from "../io.ts";
import { uuidv7 } from "../session/ids.ts";
import { resolveRecordedCwd } from "../session/paths.ts";
import { cwdOrPlaceholder } from "../session/recorded-cwd.ts";
import { buildContextEntries, buildSessionContext, buildSessionProjection } from "./context.ts";
import {
  assertValidSessionId,
  defaultSessionDirPath,
  findMostRecentSession,
  findSessionById,
  getDefaultSessionDir,
  migrateSessionEntries,
  newShortId,
  samePath,
} from "./file-entries.ts";
import { currentSystemMessage } from "./system-message.ts";
import { readSessionUnlocked } from "./read-session.ts";
import { resolvePiOptions, type PiStoreOptions, type ResolvedPiOptions } from "./options.ts";
import { PiSessionDisk } from "./session-disk.ts";
import { listSessionDir, listSessionTree } from "./session-list.ts";
import { archivedIds } from "../lifecycle/lifecycle-log.ts";
import { storeRootOf } from "../lifecycle/file-lifecycle.ts";
import { buildPiTree } from "./session-tree.ts";
import { EntryIndex } from "./entry-index.ts";
import {
  CURRENT_SESSION_VERSION,
  type BashExecutionMessage,
  type ContextEditEntry,
  type CustomMessage,
  type FileEntry,
  type ImageContent,
  type Message,
  type NewSessionOptions,
  type SessionContext,
  type SessionEntry,
  type SessionHeader,
  type SessionInfo,
  type SessionListProgress,
  type SessionProjection,
  type SessionTreeNode,
  type TextContent,
  type Usage,
  type UsageEntry,
} from "./types.ts";

/** pi's `NewSessionOptions` and this store's engine settings, in one optional argument. */
export type PiSessionOptions = NewSessionOptions & PiStoreOptions;

/** Splits a factory's options into pi's (id, parentSession) and the engine's. */
function splitOptions(options: PiSessionOptions | undefined): { session: NewSessionOptions; store: PiStoreOptions } {
  const { id, parentSession, ...store } = options ?? {};
  const session: NewSessionOptions = {};
  if (id !== undefined) session.id = id;
  if (parentSession !== undefined) session.parentSession = parentSession;
  return { session, store };
}

/** pi's message for a file that exists, is not empty and holds no session (its callers match on it). */
/** Sessions archived in the store (`<root>/lifecycle.jsonl` at the engine's root): resume pickers leave them out. */
function archivedOf(store: ResolvedPiOptions): Set<string> {
  return archivedIds(storeRootOf(store.engine), store.engine.onWarning);
}

function withoutArchived(sessions: SessionInfo[], store: ResolvedPiOptions): SessionInfo[] {
  const archived = archivedOf(store);
  return archived.size === 0 ? sessions : sessions.filter((s) => !archived.has(s.id));
}

function notASession(path: string, cause: unknown): TranscriptStoreError {
  return new TranscriptStoreError("BAD_HEADER", `Session file is not a valid pi session: ${path}`, { path, cause });
}

function notFound(id: string): TranscriptStoreError {
  return new TranscriptStoreError("ENTRY_NOT_FOUND", `Entry ${id} not found`);
}

/**
 * pi 1.5.2's `SessionManager`, same names, arguments and behaviour (an append-only tree of
 * entries with a leaf pointer, kept in a JSONL file), written through this store's engine: images
 * go to the blob store, one live writer per file (a lock), torn tails repaired, rewrites atomic.
 * Every factory takes an optional last `PiStoreOptions` argument pi's signatures do not have.
 */
export class SessionManager {
  private sessionId = "";
  private sessionFile: string | undefined;
  private readonly sessionDir: string;
  private cwd: string;
  private readonly persist: boolean;
  private fileEntries: FileEntry[] = [];
  private readonly index = new EntryIndex();
  private leafId: string | null = null;
  /** How many of `fileEntries` (header first) are in the file: 0 until the first write. */
  private onDisk = 0;
  private disk: PiSessionDisk | null = null;
  private readonly store: ResolvedPiOptions;

  private constructor(cwd: string, sessionDir: string, persist: boolean, store: ResolvedPiOptions) {
    this.cwd = resolve(cwd);
    this.sessionDir = sessionDir;
    this.persist = persist;
    this.store = store;
    if (persist && sessionDir && !existsSync(sessionDir)) ensureDir(sessionDir, store.engine.fsync);
  }

  // ---------------------------------------------------------------- factories

  /**
   * A new session of `cwd` in `sessionDir` (default pi's `<agentDir>/sessions/--<cwd>--`);
   * `options.id` (validated as pi does) names it.
   */
  static create(cwd: string, sessionDir?: string, options?: PiSessionOptions): SessionManager {
    const { session, store: storeOptions } = splitOptions(options);
    if (session.id !== undefined) assertValidSessionId(session.id);
    const store = resolvePiOptions(storeOptions);
    const manager = new SessionManager(cwd, sessionDir ? resolve(sessionDir) : getDefaultSessionDir(cwd, store.agentDir), true, store);
    manager.newSession(session);
    return manager;
  }

  /**
   * Opens a session file (absent → a new session that will be written there). New sessions and
   * branches go to `sessionDir` (default: the file's directory); `cwdOverride` replaces the
   * header's cwd. A file whose first line is not a session header is refused (BAD_HEADER).
   */
  static open(path: string, sessionDir?: string, cwdOverride?: string, options?: PiStoreOptions): SessionManager {
    const store = resolvePiOptions(options);
    const manager = new SessionManager(cwdOverride ?? process.cwd(), sessionDir ? resolve(sessionDir) : resolve(path, ".."), true, store);
    manager.setSessionFile(path);
    // pi takes the cwd from the file's header (read before anything else), unless overridden.
    const header = manager.getHeader();
    if (cwdOverride === undefined && header !== null && typeof header.cwd === "string")
      manager.cwd = resolveRecordedCwd(cwdOrPlaceholder(header.cwd));
    return manager;
  }

  /**
   * The most recently modified session of `sessionDir` (default: pi's dir of `cwd`), or a new one.
   * A `sessionDir` other than the default may hold several cwds' sessions: only `cwd`'s count.
   */
  static continueRecent(cwd: string, sessionDir?: string, options?: PiStoreOptions): SessionManager {
    const store = resolvePiOptions(options);
    const dir = sessionDir ? resolve(sessionDir) : getDefaultSessionDir(cwd, store.agentDir);
    const manager = new SessionManager(cwd, dir, true, store);
    const filterCwd = sessionDir !== undefined && !samePath(dir, defaultSessionDirPath(cwd, store.agentDir));
    const recent = findMostRecentSession(dir, filterCwd ? cwd : undefined, archivedOf(store));
    if (recent !== null) manager.setSessionFile(recent);
    else manager.newSession();
    return manager;
  }

  /**
   * A session kept only in memory; with `entries` (a header and entries held outside the file
   * system), that session, else a new one (`options.id` names it). Entries without a header join
   * a new session.
   */
  static inMemory(cwd: string = process.cwd(), options?: PiSessionOptions, entries?: FileEntry[]): SessionManager {
    const { session, store } = splitOptions(options);
    if (session.id !== undefined) assertValidSessionId(session.id);
    const manager = new SessionManager(cwd, "", false, resolvePiOptions(store));
    if (entries === undefined || entries.length === 0) {
      manager.newSession(session);
      return manager;
    }
    const header = entries.find((e): e is SessionHeader => e.type === "session");
    if (header === undefined) {
      manager.newSession(session);
      manager.fileEntries.push(...(entries as SessionEntry[]));
      manager.leafId = manager.index.rebuild(manager.fileEntries);
      return manager;
    }
    migrateSessionEntries(entries);
    manager.adopt(
      header,
      entries.filter((e): e is SessionEntry => e.type !== "session"),
      0,
    );
    return manager;
  }

  /**
   * Copies the session at `sourcePath` (read only, never locked: it may be live) into a new
   * session of `targetCwd` whose header names the source as `parentSession`, written at once.
   */
  static forkFrom(sourcePath: string, targetCwd: string, sessionDir?: string, options?: PiSessionOptions): SessionManager {
    const { session, store: storeOptions } = splitOptions(options);
    const store = resolvePiOptions(storeOptions);
    const sourceFile = resolve(sourcePath);
    const source = readSessionUnlocked(sourceFile, store);
    if (source === null)
      throw new TranscriptStoreError("SESSION_NOT_FOUND", `Cannot fork: source session file is empty or invalid: ${sourceFile}`, {
        path: sourceFile,
      });
    if (session.id !== undefined) assertValidSessionId(session.id);
    const entries = source.entries;
    const dir = sessionDir ? resolve(sessionDir) : getDefaultSessionDir(targetCwd, store.agentDir);
    const manager = new SessionManager(targetCwd, dir, true, store);
    manager.newSession({ id: session.id, parentSession: sourceFile });
    manager.fileEntries.push(...entries);
    manager.leafId = manager.index.rebuild(manager.fileEntries);
    try {
      manager.openDisk().createWhole(entries);
    } catch (err) {
      manager.releaseDisk();
      throw err;
    }
    manager.onDisk = manager.fileEntries.length;
    return manager;
  }

  /**
   * The file of session `id` in `sessionDir` (default: pi's dir of `cwd`; another dir counts only
   * `cwd`'s sessions), found from headers alone, or undefined.
   */
  static findById(cwd: string, id: string, sessionDir?: string, options?: PiStoreOptions): string | undefined {
    const store = resolvePiOptions(options);
    const dir = sessionDir ? resolve(sessionDir) : getDefaultSessionDir(cwd, store.agentDir);
    const filterCwd = sessionDir !== undefined && !samePath(dir, defaultSessionDirPath(cwd, store.agentDir));
    return findSessionById(dir, id, filterCwd ? cwd : undefined);
  }

  /**
   * Sessions of `sessionDir` (default: pi's dir of `cwd`; another dir lists only `cwd`'s), most
   * recently active first. The fourth argument is pi's `AbortSignal` or, as before, the engine options.
   */
  static async list(
    cwd: string,
    sessionDir?: string,
    onProgress?: SessionListProgress,
    signal?: AbortSignal | PiStoreOptions,
    options?: PiStoreOptions,
  ): Promise<SessionInfo[]> {
    const abort = signal instanceof AbortSignal ? signal : undefined;
    const store = resolvePiOptions(signal instanceof AbortSignal || signal === undefined ? options : signal);
    abort?.throwIfAborted();
    const dir = sessionDir ? resolve(sessionDir) : getDefaultSessionDir(cwd, store.agentDir);
    const filterCwd = sessionDir !== undefined && !samePath(dir, defaultSessionDirPath(cwd, store.agentDir));
    const sessions = withoutArchived(await listSessionDir(dir, onProgress, abort), store);
    return filterCwd ? sessions.filter((s) => s.cwd !== "" && samePath(resolveRecordedCwd(s.cwd), resolveRecordedCwd(cwd))) : sessions;
  }

  /**
   * Sessions of every cwd under `<agentDir>/sessions` (or of one `sessionDir`), most recently
   * active first. As pi: `listAll(onProgress?, signal?)` or `listAll(sessionDir?, onProgress?, signal?)`;
   * the engine options (its `agentDir`) come after pi's arguments.
   */
  static async listAll(
    sessionDirOrOnProgress?: string | SessionListProgress,
    onProgressOrSignal?: SessionListProgress | AbortSignal | PiStoreOptions,
    signal?: AbortSignal | PiStoreOptions,
    options?: PiStoreOptions,
  ): Promise<SessionInfo[]> {
    // Engine options come last: after pi's arguments, wherever those stop (the facade's older `listAll(onProgress, options)`).
    const isOptions = (a: unknown): a is PiStoreOptions => typeof a === "object" && a !== null && !(a instanceof AbortSignal);
    const store = [onProgressOrSignal, signal, options].find(isOptions);
    const dir = typeof sessionDirOrOnProgress === "string" ? resolve(sessionDirOrOnProgress) : undefined;
    const onProgress =
      typeof sessionDirOrOnProgress === "function"
        ? sessionDirOrOnProgress
        : typeof onProgressOrSignal === "function"
          ? onProgressOrSignal
          : undefined;
    const abort = [onProgressOrSignal, signal].find((a): a is AbortSignal => a instanceof AbortSignal);
    abort?.throwIfAborted();
    const resolved = resolvePiOptions(store);
    if (dir !== undefined) return withoutArchived(await listSessionDir(dir, onProgress, abort), resolved);
    return withoutArchived(await listSessionTree(resolved.sessionsRoot, onProgress, abort), resolved);
  }

  // ---------------------------------------------------------------- switching sessions

  /** Switches to another session file (resume): loads it, or starts a new session that will be written there. */
  setSessionFile(sessionFile: string): void {
    const path = resolve(sessionFile);
    if (!existsSync(path)) {
      this.newSession();
      this.sessionFile = path;
      return;
    }
    if (!this.persist) {
      // In memory nothing is written (pi's rewrites are skipped too): read without the lock.
      let read;
      try {
        read = readSessionUnlocked(path, this.store);
      } catch (err) {
        if (err instanceof TranscriptStoreError && err.code === "BAD_HEADER") throw notASession(path, err);
        throw err;
      }
      if (read === null && statSync(path).size > 0) throw notASession(path, null);
      if (read === null) this.newSession();
      else this.adopt(read.header, read.entries, 0);
      this.sessionFile = path;
      return;
    }
    const disk = new PiSessionDisk(path, this.store, () => this.getHeader()!);
    if (this.disk?.path !== path && PiSessionDisk.writtenInProcess(path)) {
      // Another manager of this process writes the file (pi opens one file with several managers
      // and closes none): read it as it is now; this one takes the file over at its first write.
      const read = readSessionUnlocked(path, this.store);
      this.releaseDisk();
      if (read === null) throw notASession(path, null);
      this.disk = disk;
      this.sessionFile = path;
      this.adopt(read.header, read.entries, read.entries.length + 1);
      return;
    }
    if (this.disk?.path === path) this.releaseDisk();
    let loaded;
    try {
      loaded = disk.load();
      if (loaded === null) {
        // An empty file becomes a new session, written there at once (its header).
        this.newSession();
        this.sessionFile = path;
        disk.writeWhole([]);
      }
    } catch (err) {
      disk.release();
      if (err instanceof TranscriptStoreError && err.code === "BAD_HEADER") throw notASession(path, err);
      throw err;
    }
    this.releaseDisk();
    this.disk = disk;
    this.sessionFile = path;
    if (loaded === null) {
      this.onDisk = 1;
      return;
    }
    this.adopt(loaded.header, loaded.entries, loaded.entries.length + 1);
  }

  /** Takes a read session as this manager's, `onDisk` of its lines in the file. */
  private adopt(header: SessionHeader, entries: SessionEntry[], onDisk: number): void {
    this.fileEntries = [header, ...entries];
    this.sessionId = header.id;
    this.leafId = this.index.rebuild(this.fileEntries);
    this.onDisk = onDisk;
  }

  /**
   * Starts a new, empty session (written once it has a user or assistant message); returns its
   * file path. `options.id` must be a valid session id (pi's rule: letters, digits, `.`, `_`, `-`,
   * starting and ending with a letter or digit).
   */
  newSession(options?: NewSessionOptions): string | undefined {
    if (options?.id !== undefined) assertValidSessionId(options.id);
    this.releaseDisk();
    this.sessionId = options?.id ?? uuidv7();
    const timestamp = new Date().toISOString();
    const header: SessionHeader = {
      type: "session",
      version: CURRENT_SESSION_VERSION,
      id: this.sessionId,
      timestamp,
      cwd: this.cwd,
      parentSession: options?.parentSession,
    };
    this.fileEntries = [header];
    this.leafId = this.index.rebuild([]);
    this.onDisk = 0;
    if (this.persist) this.sessionFile = join(this.getSessionDir(), `${timestamp.replace(/[:.]/g, "-")}_${this.sessionId}.jsonl`);
    return this.sessionFile;
  }

  /**
   * A new session holding only the path root → `leafId`, which this manager switches to: label
   * entries on the path left out and the path re-chained, the current labels of its entries
   * re-added at its end (`extractPath`, as pi 1.5.2 does). Written at once if it has a user or
   * assistant message. Returns its file path, or undefined in memory.
   */
  createBranchedSession(leafId: string): string | undefined {
    const previousFile = this.sessionFile;
    const path = this.getBranch(leafId);
    if (path.length === 0) throw notFound(leafId);
    const current = new Map(
      [...this.index.labels].map(([target, label]) => [target, { label, timestamp: this.index.labelTimes.get(target)! }]),
    );
    const extracted = extractPath(path, current, newShortId);
    const timestamp = new Date().toISOString();
    const id = uuidv7();
    const header: SessionHeader = {
      type: "session",
      version: CURRENT_SESSION_VERSION,
      id,
      timestamp,
      cwd: this.cwd,
      parentSession: this.persist ? previousFile : undefined,
    };
    this.releaseDisk();
    this.fileEntries = [header, ...extracted];
    this.sessionId = id;
    this.onDisk = 0;
    this.leafId = this.index.rebuild(this.fileEntries);
    if (!this.persist) return undefined;
    this.sessionFile = join(this.getSessionDir(), `${timestamp.replace(/[:.]/g, "-")}_${id}.jsonl`);
    if (this.index.hasConversation) {
      this.openDisk().createWhole(this.getEntries());
      this.onDisk = this.fileEntries.length;
    }
    return this.sessionFile;
  }

  // ---------------------------------------------------------------- identity

  isPersisted(): boolean {
    return this.persist;
  }
  getCwd(): string {
    return this.cwd;
  }
  getSessionDir(): string {
    return this.sessionDir;
  }
  /** Whether new sessions go to pi's default directory of this cwd. */
  usesDefaultSessionDir(): boolean {
    return samePath(this.sessionDir, defaultSessionDirPath(this.cwd, this.store.agentDir));
  }
  getSessionId(): string {
    return this.sessionId;
  }
  getSessionFile(): string | undefined {
    return this.sessionFile;
  }
  getHeader(): SessionHeader | null {
    return (this.fileEntries.find((e) => e.type === "session") as SessionHeader | undefined) ?? null;
  }
  /** The latest `session_info` name (an explicit clear counts), or undefined. */
  getSessionName(): string | undefined {
    for (let i = this.fileEntries.length - 1; i >= 0; i--) {
      const entry = this.fileEntries[i]!;
      if (entry.type === "session_info") return entry.name?.trim() || undefined;
    }
    return undefined;
  }

  // ---------------------------------------------------------------- appends

  /**
   * Writes what is pending: nothing until the session has a user or assistant message (pi
   * 1.5.2's deferral: setup entries alone leave no file), then everything not yet in the file. A
   * call with an entry not in the session appends it too.
   */
  _persist(entry: SessionEntry): void {
    if (!this.persist || !this.sessionFile || !this.index.hasConversation) return;
    const disk = this.openDisk();
    if (this.onDisk === 0) {
      disk.createWhole(this.getEntries());
      this.onDisk = this.fileEntries.length;
    }
    while (this.onDisk < this.fileEntries.length) {
      disk.append(this.fileEntries[this.onDisk] as SessionEntry);
      this.onDisk++;
    }
    if (!this.fileEntries.includes(entry)) disk.append(entry);
  }

  /** Appends a message (child of the leaf, becomes the leaf); returns its id. */
  appendMessage(message: Message | CustomMessage | BashExecutionMessage): string {
    return this.appendEntry({ type: "message", message });
  }
  appendThinkingLevelChange(thinkingLevel: string): string {
    return this.appendEntry({ type: "thinking_level_change", thinkingLevel });
  }
  appendModelChange(provider: string, modelId: string): string {
    return this.appendEntry({ type: "model_change", provider, modelId });
  }
  /** Model-attributed usage that is no part of the context; returns the appended entry. */
  appendUsage(kind: string, provider: string, model: string, usage: Usage, note?: string): UsageEntry {
    const id = this.appendEntry({ type: "usage", kind, provider, model, usage, ...(note ? { note } : {}) });
    return this.index.byId.get(id) as UsageEntry;
  }
  /**
   * A compaction: `firstKeptEntryId` null keeps nothing before it (its own id is recorded). It
   * carries the prompt and tool state the context's system messages add up to (`systemMessage`).
   */
  appendCompaction<T = unknown>(
    summary: string,
    firstKeptEntryId: string | null,
    tokensBefore: number,
    details?: T,
    fromHook?: boolean,
    usage?: Usage,
  ): string {
    const system = currentSystemMessage(this.buildSessionProjection().messages);
    return this.appendEntry({ type: "compaction", summary, firstKeptEntryId, tokensBefore, details, usage, fromHook }, (entry) => {
      if (firstKeptEntryId === null) entry.firstKeptEntryId = entry.id;
      if (system) entry.systemMessage = { ...system, timestamp: new Date(entry.timestamp as string).getTime() };
    });
  }
  appendCustomEntry(customType: string, data?: unknown): string {
    return this.appendEntry({ type: "custom", customType, data });
  }
  /** Names the session (line breaks become spaces, trimmed); an empty name clears it. */
  appendSessionInfo(name: string): string {
    return this.appendEntry({ type: "session_info", name: name.replace(/[\r\n]+/g, " ").trim() });
  }
  appendCustomMessageEntry<T = unknown>(
    customType: string,
    content: string | (TextContent | ImageContent)[],
    display: boolean,
    details?: T,
  ): string {
    return this.appendEntry({ type: "custom_message", customType, content, display, details });
  }
  /**
   * A branch-local edit of an earlier entry's contribution to the context (a user, assistant,
   * tool-result or custom message on the active branch): `null` leaves it out, `{ content }`
   * replaces its content (a string becomes one text block for assistant and tool results).
   */
  appendContextEdit(targetId: string, replacement: ContextEditEntry["replacement"]): string {
    if (
      replacement !== null &&
      (typeof replacement !== "object" ||
        !("content" in replacement) ||
        (typeof replacement.content !== "string" && !Array.isArray(replacement.content)))
    )
      throw new TranscriptStoreError("INVALID_OPTION", "Context edit replacement must be null or contain string/array content");
    const target = this.index.byId.get(targetId);
    if (target === undefined) throw notFound(targetId);
    if (!this.getBranch().some((e) => e.id === targetId))
      throw new TranscriptStoreError("ENTRY_NOT_FOUND", `Entry ${targetId} is not on the active branch`);
    const role = target.type === "message" ? target.message.role : target.type === "custom_message" ? "custom" : null;
    if (role !== "user" && role !== "assistant" && role !== "toolResult" && role !== "custom")
      throw new TranscriptStoreError("INVALID_OPTION", `Entry ${targetId} does not contribute editable model content`);
    const normalized =
      replacement !== null && (role === "assistant" || role === "toolResult") && typeof replacement.content === "string"
        ? { content: [{ type: "text", text: replacement.content }] }
        : replacement;
    return this.appendEntry({ type: "context_edit", targetId, replacement: normalized });
  }
  /** Sets (or with undefined/"" clears) the label of an existing entry. */
  appendLabelChange(targetId: string, label: string | undefined): string {
    if (!this.index.byId.has(targetId)) throw notFound(targetId);
    return this.appendEntry({ type: "label", targetId, label });
  }
  /**
   * Moves the leaf to `branchFromId` (null: before the root) and appends a summary of the
   * abandoned path, whose leaf it names as `fromId` ("root" when there was none).
   */
  branchWithSummary(branchFromId: string | null, summary: string, details?: unknown, fromHook?: boolean, usage?: Usage): string {
    if (branchFromId !== null && !this.index.byId.has(branchFromId)) throw notFound(branchFromId);
    const previous = this.leafId;
    this.leafId = branchFromId;
    try {
      return this.appendEntry({ type: "branch_summary", fromId: previous ?? "root", summary, details, usage, fromHook });
    } catch (err) {
      this.leafId = previous;
      throw err;
    }
  }

  // ---------------------------------------------------------------- tree

  getLeafId(): string | null {
    return this.leafId;
  }
  getLeafEntry(): SessionEntry | undefined {
    return this.leafId ? this.index.byId.get(this.leafId) : undefined;
  }
  getEntry(id: string): SessionEntry | undefined {
    return this.index.byId.get(id);
  }
  getChildren(parentId: string): SessionEntry[] {
    return [...this.index.byId.values()].filter((e) => e.parentId === parentId);
  }
  getLabel(id: string): string | undefined {
    return this.index.labels.get(id);
  }
  /** root → `fromId` (default: the leaf); [] for an unknown id. */
  getBranch(fromId?: string): SessionEntry[] {
    return this.index.path(fromId ?? this.leafId);
  }
  /** The compaction-aware entries at the leaf (what the context is built from). */
  buildContextEntries(): SessionEntry[] {
    return buildContextEntries(this.getEntries(), this.leafId, this.index.byId);
  }
  /** What the model sees at the leaf, each message with its source entry (context edits applied). */
  buildSessionProjection(): SessionProjection {
    return buildSessionProjection(this.getEntries(), this.leafId, this.index.byId);
  }
  buildSessionContext(): SessionContext {
    return buildSessionContext(this.getEntries(), this.leafId, this.index.byId);
  }
  /** How many entries the session has (the header not counted), without copying them. */
  getEntryCount(): number {
    return this.index.byId.size;
  }
  /** Every entry but the header, in file order (a shallow copy). */
  getEntries(): SessionEntry[] {
    return this.fileEntries.filter((e): e is SessionEntry => e.type !== "session");
  }
  getTree(): SessionTreeNode[] {
    return buildPiTree(this.getEntries(), this.index.labels, this.index.labelTimes);
  }
  branch(branchFromId: string): void {
    if (!this.index.byId.has(branchFromId)) throw notFound(branchFromId);
    this.leafId = branchFromId;
  }
  resetLeaf(): void {
    this.leafId = null;
  }

  // ---------------------------------------------------------------- lifecycle (not in pi)

  /** Releases the session file's lock (pi has no close; the lock is also freed at process exit). */
  close(): void {
    this.releaseDisk();
  }

  // ---------------------------------------------------------------- internals

  private appendEntry(fields: { type: string; [key: string]: unknown }, complete?: (entry: Record<string, unknown>) => void): string {
    const entry = {
      ...fields,
      id: newShortId(this.index.byId),
      parentId: this.leafId,
      timestamp: isoTime(Date.now()),
    } as SessionEntry;
    complete?.(entry as unknown as Record<string, unknown>);
    const previousLeaf = this.leafId;
    this.fileEntries.push(entry);
    this.index.add(entry);
    this.leafId = entry.id;
    try {
      this._persist(entry);
    } catch (err) {
      // Not in the file: not in the session either (entries before it stay pending).
      if (this.onDisk < this.fileEntries.length) {
        this.fileEntries.pop();
        this.index.rebuild(this.fileEntries);
        this.leafId = previousLeaf;
      }
      throw err;
    }
    return entry.id;
  }

  private openDisk(): PiSessionDisk {
    if (this.disk === null || this.disk.path !== this.sessionFile) {
      this.releaseDisk();
      this.disk = new PiSessionDisk(this.sessionFile!, this.store, () => this.getHeader()!);
    }
    return this.disk;
  }

  private releaseDisk(): void {
    const disk = this.disk;
    this.disk = null;
    disk?.release();
  }
}
