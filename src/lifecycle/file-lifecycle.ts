import { resolve } from "node:path";
import { io } from "../io.ts";
import { defaultRoot } from "../session/paths.ts";
import { readSessionInfo, type SessionInfo } from "../session/session-info.ts";
import { isLeftoverLock } from "../session/session-lock.ts";
import type { ResolvedSessionManagerOptions } from "../session/session-options.ts";
import {
  bytesUnder,
  type FileTrashOptions,
  listTrashEntries,
  purgeTrashEntry,
  restoreTrashEntry,
  sessionParts,
  trashDirOf,
  trashSessionFile,
} from "./file-trash.ts";
import type { LifecycleDriver, TrashEntry } from "./lifecycle-driver.ts";
import { appendLifecycleRecord, foldFlags, lifecycleLogPath, readLifecycleLog, type SessionFlags } from "./lifecycle-log.ts";
import { basename, dirname, join } from "node:path";
import { TranscriptStoreError } from "../errors.ts";

/** The store root of these options (`root`, else `$TRANSCRIPT_STORE_HOME` or ~/.transcript-store): where lifecycle state lives. */
export function storeRootOf(options: ResolvedSessionManagerOptions): string {
  const root = options.original.root;
  return root !== undefined ? resolve(root) : defaultRoot();
}

/** The file tree's lifecycle: flags in `<root>/lifecycle.jsonl`, the trash in `<root>/trash/`. */
export class FileLifecycle implements LifecycleDriver {
  readonly location: string;
  private readonly root: string;
  private readonly places: FileTrashOptions;

  constructor(private readonly options: ResolvedSessionManagerOptions) {
    this.root = storeRootOf(options);
    this.location = lifecycleLogPath(this.root);
    this.places = { root: this.root, blobsDir: options.blobsDir, lockStaleMs: options.lockStaleMs, onWarning: options.onWarning };
  }

  async flags(): Promise<Map<string, SessionFlags>> {
    return foldFlags(readLifecycleLog(this.root, this.options.onWarning));
  }

  async setFlag(session: SessionInfo, flag: keyof SessionFlags, value: boolean, at: Date): Promise<void> {
    const op = flag === "pinned" ? (value ? "pin" : "unpin") : value ? "archive" : "unarchive";
    appendLifecycleRecord(this.root, { op, id: session.id, at: at.toISOString(), path: session.path });
  }

  async bytesOf(session: SessionInfo): Promise<number> {
    const dir = dirname(session.path);
    return sessionParts(session.path).reduce((sum, name) => sum + bytesUnder(join(dir, name)), 0);
  }

  async isLive(session: SessionInfo): Promise<boolean> {
    // A lock directory no leftover check clears is a writer's (one without our declaration too).
    if (io.lstatSync(`${session.path}.lock`, { throwIfNoEntry: false }) === undefined) return false;
    return !isLeftoverLock(session.path);
  }

  /** The session file inside its trash entry (what accounting reads before a purge). */
  trashedRef(entry: TrashEntry): string {
    return join(trashDirOf(this.root), entry.trashId, basename(entry.from));
  }

  async trash(session: SessionInfo, at: Date, check?: () => Promise<void>): Promise<TrashEntry> {
    // The trash, restore and purge records are written by file-trash.ts at each step's commit.
    return trashSessionFile(session.path, { sessionId: session.id, cwd: session.cwd }, at, { ...this.places, check });
  }

  listTrash(): Promise<TrashEntry[]> {
    return listTrashEntries(this.places);
  }

  async restore(entry: TrashEntry, at: Date): Promise<SessionInfo> {
    const path = await restoreTrashEntry(entry, this.places, at);
    const info = readSessionInfo(path);
    if (info === null) throw new TranscriptStoreError("BAD_HEADER", `Restored ${path}, which lists as no session`, { path });
    return info;
  }

  async purge(entry: TrashEntry, at: Date): Promise<void> {
    await purgeTrashEntry(entry, this.places, at);
  }
}
