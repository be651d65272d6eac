import type { SessionInfo } from "../session/session-info.ts";

/** The flags a session carries of its own (not derived from its transcript). */
export interface SessionFlags {
  pinned: boolean;
  archived: boolean;
  /** In the trash (a database keeps a trashed session's rows; the file tree moves its files out of the listing). */
  trashed?: boolean;
}

/** A session in the trash. */
export interface TrashEntry {
  /** The trash entry's own id (`restore`/`purge` take it, or the session id). */
  trashId: string;
  sessionId: string;
  cwd: string;
  /** Where the session lived (file path, or `<database>#<id>`), where `restore` puts it back. */
  from: string;
  trashedAt: Date;
  /** Bytes it holds (session file or rows, artifacts, quarantine, backups). */
  bytes: number;
}

/** What the lifecycle needs of a backend: flags, the live-writer check, and the trash. */
export interface LifecycleDriver {
  /** Where the state lives, for messages (a file, or a table). */
  readonly location: string;
  /** Flags of every session that has one, by session id. */
  flags(): Promise<Map<string, SessionFlags>>;
  /** Records a flag change; `path` names the session for the record. */
  setFlag(session: SessionInfo, flag: keyof SessionFlags, value: boolean, at: Date): Promise<void>;
  /** Bytes a session takes in the store. */
  bytesOf(session: SessionInfo): Promise<number>;
  /** A writer holds the session's lock or lease right now (judged without taking it). */
  isLive(session: SessionInfo): Promise<boolean>;
  /** `bytesOf` and `isLive` of many sessions at once, by session id (a database answers in one query). Optional. */
  states?(sessions: readonly SessionInfo[]): Promise<Map<string, { bytes: number; live: boolean }>>;
  /**
   * Moves the session (and its artifacts) to the trash. `SESSION_LOCKED` when a writer holds it.
   * `check`, when given, runs holding the session's lock just before the first move (a throw stops
   * it, nothing moved): prune re-checks its facts there. A driver without a lock to hold runs it first.
   */
  trash(session: SessionInfo, at: Date, check?: () => Promise<void>): Promise<TrashEntry>;
  /** Every entry of the trash (interrupted moves finished or undone first). */
  listTrash(): Promise<TrashEntry[]>;
  /** Puts an entry back where it was; returns the session's listing. */
  restore(entry: TrashEntry, at: Date): Promise<SessionInfo>;
  /** Deletes an entry for good. */
  purge(entry: TrashEntry, at: Date): Promise<void>;
  /** What the store's accounting opens for a trashed session (its file in the trash). @default its session id */
  trashedRef?(entry: TrashEntry): string;
}
