import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { TranscriptStoreError } from "../errors.ts";
import { ensureDir } from "../io.ts";
import { uuidv7 } from "../session/ids.ts";
import { buildSessionContext } from "./context.ts";
import { findMostRecentSession, getDefaultSessionDir, newShortId } from "./file-entries.ts";
import { readSessionUnlocked } from "./read-session.ts";
import { resolvePiOptions, type PiStoreOptions, type ResolvedPiOptions } from "./options.ts";
import { PiSessionDisk } from "./session-disk.ts";
import { listSessionDir, listSessionTree } from "./session-list.ts";
import { buildPiTree } from "./session-tree.ts";
import { EntryIndex } from "./entry-index.ts";
import {
  CURRENT_SESSION_VERSION,
  type BashExecutionMessage,
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
  type SessionTreeNode,
  type TextContent,
} from "./types.ts";

function notFound(id: string): TranscriptStoreError {
  return new TranscriptStoreError("ENTRY_NOT_FOUND", `Entry ${id} not found`);
}

/**
 * pi 0.73.1's `SessionManager`, same names, arguments and behaviour (an append-only tree of
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
    this.cwd = cwd;
    this.sessionDir = sessionDir;
    this.persist = persist;
    this.store = store;
    if (persist && sessionDir && !existsSync(sessionDir)) ensureDir(sessionDir, store.engine.fsync);
  }

  // ---------------------------------------------------------------- factories

  /** A new session of `cwd` in `sessionDir` (default pi's `<agentDir>/sessions/--<cwd>--`). */
  static create(cwd: string, sessionDir?: string, options?: PiStoreOptions): SessionManager {
    const store = resolvePiOptions(options);
    const manager = new SessionManager(cwd, sessionDir ?? getDefaultSessionDir(cwd, store.agentDir), true, store);
    manager.newSession();
    return manager;
  }

  /**
   * Opens a session file (absent → a new session that will be written there). New sessions and
   * branches go to `sessionDir` (default: the file's directory); `cwdOverride` replaces the
   * header's cwd. A file whose first line is not a session header is refused (BAD_HEADER).
   */
  static open(path: string, sessionDir?: string, cwdOverride?: string, options?: PiStoreOptions): SessionManager {
    const store = resolvePiOptions(options);
    const manager = new SessionManager(cwdOverride ?? process.cwd(), sessionDir ?? resolve(path, ".."), true, store);
    manager.setSessionFile(path);
    // pi takes the cwd from the file's header (read before anything else), unless overridden.
    const header = manager.getHeader();
    if (cwdOverride === undefined && header !== null && typeof header.cwd === "string") manager.cwd = header.cwd;
    return manager;
  }

  /** The most recently modified session of `sessionDir` (default: pi's dir of `cwd`), or a new one. */
  static continueRecent(cwd: string, sessionDir?: string, options?: PiStoreOptions): SessionManager {
    const store = resolvePiOptions(options);
    const dir = sessionDir ?? getDefaultSessionDir(cwd, store.agentDir);
    const manager = new SessionManager(cwd, dir, true, store);
    const recent = findMostRecentSession(dir);
    if (recent !== null) manager.setSessionFile(recent);
    else manager.newSession();
    return manager;
  }

  /** A session kept only in memory. */
  static inMemory(cwd: string = process.cwd(), options?: PiStoreOptions): SessionManager {
    const manager = new SessionManager(cwd, "", false, resolvePiOptions(options));
    manager.newSession();
    return manager;
  }

  /**
   * Copies the session at `sourcePath` (read only, never locked: it may be live) into a new
   * session of `targetCwd` whose header names the source as `parentSession`, written at once.
   */
  static forkFrom(sourcePath: string, targetCwd: string, sessionDir?: string, options?: PiStoreOptions): SessionManager {
    const store = resolvePiOptions(options);
    const source = readSessionUnlocked(sourcePath, store);
    if (source === null)
      throw new TranscriptStoreError("SESSION_NOT_FOUND", `Cannot fork: source session file is empty or absent: ${sourcePath}`, {
        path: sourcePath,
      });
    const entries = source.entries;
    const dir = sessionDir ?? getDefaultSessionDir(targetCwd, store.agentDir);
    const manager = new SessionManager(targetCwd, dir, true, store);
    manager.newSession({ parentSession: sourcePath });
    manager.fileEntries.push(...entries);
    manager.leafId = manager.index.rebuild(manager.fileEntries);
    manager.openDisk().writeWhole(entries);
    manager.onDisk = manager.fileEntries.length;
    return manager;
  }

  /** Sessions of `sessionDir` (default: pi's dir of `cwd`), most recently active first. */
  static async list(cwd: string, sessionDir?: string, onProgress?: SessionListProgress, options?: PiStoreOptions): Promise<SessionInfo[]> {
    const store = resolvePiOptions(options);
    return listSessionDir(sessionDir ?? getDefaultSessionDir(cwd, store.agentDir), onProgress);
  }

  /** Sessions of every cwd under `<agentDir>/sessions`, most recently active first. */
  static async listAll(onProgress?: SessionListProgress, options?: PiStoreOptions): Promise<SessionInfo[]> {
    return listSessionTree(resolvePiOptions(options).sessionsRoot, onProgress);
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
      const read = readSessionUnlocked(path, this.store);
      if (read === null) this.newSession();
      else this.adopt(read.header, read.entries, 0);
      this.sessionFile = path;
      return;
    }
    const disk = new PiSessionDisk(path, this.store, () => this.getHeader()!);
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

  /** Starts a new, empty session (written once it has an assistant message); returns its file path. */
  newSession(options?: NewSessionOptions): string | undefined {
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
   * A new session holding only the path root → `leafId` (labels on it kept, re-added at its end),
   * which this manager switches to. Written at once if it has an assistant message. Returns its
   * file path, or undefined in memory.
   */
  createBranchedSession(leafId: string): string | undefined {
    const previousFile = this.sessionFile;
    const path = this.getBranch(leafId);
    if (path.length === 0) throw notFound(leafId);
    const kept = path.filter((e) => e.type !== "label");
    const labels = this.index.labelsFor(kept);
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
    this.fileEntries = [header, ...kept, ...labels];
    this.sessionId = id;
    this.onDisk = 0;
    this.leafId = this.index.rebuild(this.fileEntries);
    if (!this.persist) return undefined;
    this.sessionFile = join(this.getSessionDir(), `${timestamp.replace(/[:.]/g, "-")}_${id}.jsonl`);
    if (this.index.hasAssistant) {
      this.openDisk().writeWhole(this.getEntries());
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
   * Writes what is pending: nothing until the session has an assistant message (pi's deferral),
   * then everything not yet in the file. A call with an entry not in the session appends it too.
   */
  _persist(entry: SessionEntry): void {
    if (!this.persist || !this.sessionFile || !this.index.hasAssistant) return;
    const disk = this.openDisk();
    if (this.onDisk === 0) {
      disk.writeWhole(this.getEntries());
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
  appendCompaction<T = unknown>(summary: string, firstKeptEntryId: string, tokensBefore: number, details?: T, fromHook?: boolean): string {
    return this.appendEntry({ type: "compaction", summary, firstKeptEntryId, tokensBefore, details, fromHook });
  }
  appendCustomEntry(customType: string, data?: unknown): string {
    return this.appendEntry({ type: "custom", customType, data });
  }
  /** Names the session (trimmed); an empty name clears it. */
  appendSessionInfo(name: string): string {
    return this.appendEntry({ type: "session_info", name: name.trim() });
  }
  appendCustomMessageEntry<T = unknown>(
    customType: string,
    content: string | (TextContent | ImageContent)[],
    display: boolean,
    details?: T,
  ): string {
    return this.appendEntry({ type: "custom_message", customType, content, display, details });
  }
  /** Sets (or with undefined/"" clears) the label of an existing entry. */
  appendLabelChange(targetId: string, label: string | undefined): string {
    if (!this.index.byId.has(targetId)) throw notFound(targetId);
    return this.appendEntry({ type: "label", targetId, label });
  }
  /** Moves the leaf to `branchFromId` (null: before the root) and appends a summary of the abandoned path. */
  branchWithSummary(branchFromId: string | null, summary: string, details?: unknown, fromHook?: boolean): string {
    if (branchFromId !== null && !this.index.byId.has(branchFromId)) throw notFound(branchFromId);
    const previous = this.leafId;
    this.leafId = branchFromId;
    try {
      return this.appendEntry({ type: "branch_summary", fromId: branchFromId ?? "root", summary, details, fromHook });
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
  buildSessionContext(): SessionContext {
    return buildSessionContext(this.getEntries(), this.leafId, this.index.byId);
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

  private appendEntry(fields: { type: string; [key: string]: unknown }): string {
    const entry = {
      ...fields,
      id: newShortId(this.index.byId),
      parentId: this.leafId,
      timestamp: new Date().toISOString(),
    } as SessionEntry;
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
