import type { ArtifactStore } from "../artifacts/artifact-store.ts";
import type { Blobs } from "../blob/blobs.ts";

export type { Blobs };
import type { LoadReport } from "../format/load-report.ts";
import type { SessionEntry, SessionHeader } from "../format/types.ts";
import type { BlobReader } from "../session/rehydrate.ts";
import type { SessionInfo } from "../session/session-info.ts";
import type { ResolvedSessionManagerOptions } from "../session/session-options.ts";
import type { DiscoveryOptions } from "../session/discovery.ts";
import type { EntrySource } from "../session/entry-tree.ts";
import type { ImportOutcome, SessionSnapshot } from "./session-snapshot.ts";
import type { SessionIndex } from "../search/index-types.ts";
import type { Supports } from "./capabilities.ts";
import type { AccountingDriver, MaintenanceDriver } from "./store-drivers.ts";

/**
 * The storage seam. `SessionManager` keeps a session's tree in memory and decides what to append;
 * everything that persists it goes through these two interfaces. The file tree implements them in
 * `storage/file/`, PostgreSQL in `storage/postgres/`; one conformance suite
 * (`test/conformance/`) runs the same behaviours against both.
 */

/**
 * Which backend holds a session: its own name (`file`, and each registered backend's), for messages
 * only. Nothing outside a backend's folder compares it: a service asks `supports` (capabilities.ts).
 */
export type StorageKind = string;

/** Callbacks a storage uses to reach its manager (warnings, the loss of the single-writer lease). */
export interface StorageHooks {
  warn(warning: import("../errors.ts").StoreWarning): void;
  /** The lease or lock was lost: the manager turns read-only. */
  lost(err: Error): void;
  /** The manager's current header (a deferred header is written from it). */
  header(): SessionHeader;
}

/** One open session's persistence: appends, its lease, its blobs and artifacts, fork and move. */
export interface SessionStorage {
  readonly kind: StorageKind;
  /** The session file, when the session lives in a file. */
  readonly path: string | null;
  /** Where the session lives, for messages: its path, or `<database>#<id>`. */
  readonly location: string | null;
  readonly blobs: Blobs;
  /** Synchronous blob reads for rehydration (file: the store or the file line; database: what the open fetched). */
  readonly blobReader: BlobReader;
  /**
   * Persists one entry (the manager assigned its id and parent) and returns what memory keeps:
   * the entry as given, or in lazy mode its prepared form. Throws with nothing persisted.
   * A database backend queues it: `flush()` is its acknowledgement.
   */
  persist(entry: SessionEntry): SessionEntry;
  /**
   * The entry as the store holds it, for an export that keeps refs: refs where a blob is stored,
   * images inline where the file still holds them inline (a lazy open's memory has refs for those).
   */
  asStored(entry: SessionEntry): SessionEntry;
  /** Throws `SESSION_LOCKED` when the single-writer lock or lease may no longer be ours. */
  assertHeld(): void;
  /** The session's artifacts, or null when it has none (in memory). */
  artifacts(): ArtifactStore | null;
  /** A new session (header given) holding `entries`: the whole session, or a branch of it. */
  fork(request: ForkRequest): Promise<OpenedSession>;
  /** Moves the session to `header.cwd`, all or nothing; afterwards the storage refers to the new place. */
  moveTo(header: SessionHeader): Promise<void>;
  /** Resolves when everything persisted so far is durable (file: data-synced; database: committed). */
  flush(): Promise<void>;
  /** Flushes what it can, releases the lease, closes handles. Idempotent. */
  close(): Promise<void>;
}

export interface ForkRequest {
  header: SessionHeader;
  entries: SessionEntry[];
  /** The fork keeps every entry of the source (a byte or row copy may be used). */
  whole: boolean;
  options: ResolvedSessionManagerOptions;
}

/** What a backend hands the manager for a session it created or opened. */
export interface OpenedSession {
  header: SessionHeader;
  /** The entries, or how to read them on first need (a fork copied byte for byte). */
  entries: EntrySource;
  loadReport: LoadReport;
  /** Built once the manager exists (its hooks are the manager's). */
  storage: (hooks: StorageHooks) => SessionStorage;
}

/** A store of sessions: what the SessionManager factories and the CLI need. */
export interface StorageBackend {
  readonly kind: StorageKind;
  /** What it supports beyond the required part (capabilities.ts); each optional driver below is there when declared. */
  readonly supports: Supports;
  /** A new session with this header (the backend chooses where it lives). */
  create(header: SessionHeader, options: ResolvedSessionManagerOptions): Promise<OpenedSession>;
  /** An existing session: a file path or a session id (database). Absent: null when `mayCreate`. */
  open(ref: string, options: ResolvedSessionManagerOptions): Promise<OpenedSession>;
  /**
   * A fork of the whole stored session `ref` into `cwd`, made without reading its entries (a byte
   * copy) and giving the same result as opening it and forking; null when that cannot be promised
   * (the caller then opens the source and forks it). Optional.
   */
  forkWhole?(ref: string, cwd: string, options: ResolvedSessionManagerOptions): Promise<OpenedSession | null>;
  list(cwd: string | null, options: ResolvedSessionManagerOptions & DiscoveryOptions): Promise<SessionInfo[]>;
  resolve(arg: string, cwd: string | undefined, options: ResolvedSessionManagerOptions & DiscoveryOptions): Promise<SessionInfo>;
  /** Pins, archive and trash of this store's sessions (state kept by the store itself). Optional. */
  lifecycle?(options: ResolvedSessionManagerOptions): import("../lifecycle/lifecycle-driver.ts").LifecycleDriver;
  /** Deletes blobs no session references and older than the grace period (or lists them: `dryRun`). */
  gc(options: ResolvedSessionManagerOptions, gc: StoreGcOptions): Promise<StoreGcReport>;
  /**
   * The exact-id lookup: what `open` takes for session `id` (its file, or its id in a database),
   * or null when the store holds no session of that id. No prefix, no cwd: the id only.
   */
  locate(id: string, options: ResolvedSessionManagerOptions): Promise<string | null>;
  /** True when the store holds a session of this exact id (`locate` not null). */
  has(id: string, options: ResolvedSessionManagerOptions): Promise<boolean>;
  /**
   * The stored session `ref` (what `open` takes) as a backend-neutral snapshot: its header and
   * lines as stored, quarantine, artifacts and blobs, read on demand (`SESSION_NOT_FOUND`).
   */
  exportSnapshot(ref: string, options: ResolvedSessionManagerOptions): Promise<SessionSnapshot>;
  /**
   * Takes a snapshot in, ids kept, comparing it with the session of the same id under the one rule
   * (`relateSessions`): `created`, `unchanged`, `appended`; a conflict is `IMPORT_CONFLICT` with
   * nothing written.
   */
  importSnapshot(snapshot: SessionSnapshot, options: ResolvedSessionManagerOptions): Promise<ImportOutcome>;
  /** A name for messages: the file tree's sessions directory is named by the caller; a database its redacted URL. */
  readonly name?: string;
  /** Ends what the backend holds open (connections). Optional: the file tree holds nothing. */
  close?(): Promise<void>;
  /** The store's search index (derived, rebuildable; issue 24), when the backend keeps one itself. Optional. */
  index?(options: ResolvedSessionManagerOptions): Promise<SessionIndex>;
  /** `du`, `usage` and the ledger of deleted sessions over the store's own rows (`supports.accounting`). Optional. */
  accounting?(): AccountingDriver;
  /** `stats`, `verify`, `rekey --store`, `redact --store` over the whole store (`supports.maintenance`). Optional. */
  maintenance?(): MaintenanceDriver;
}

export interface StoreGcOptions {
  /** Only blobs untouched for longer than this are deleted. @default 1 hour */
  graceMs?: number;
  dryRun?: boolean;
}

export interface StoreGcReport {
  /** Hashes deleted (with `dryRun`: that would be). */
  deleted: string[];
  bytesFreed: number;
}
