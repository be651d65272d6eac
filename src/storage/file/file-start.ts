import { resolve } from "node:path";
import { BlobStore } from "../../blob/blob-store.ts";
import { TranscriptStoreError, type StoreWarning } from "../../errors.ts";
import { emptyLoadReport } from "../../format/load-report.ts";
import { CURRENT_VERSION, type SessionEntry, type SessionHeader } from "../../format/types.ts";
import { uuidv7 } from "../../session/ids.ts";
import { InlineImageSources } from "../../session/inline-image-sources.ts";
import { recoverMovesOnOpen } from "../../session/move-recovery.ts";
import { idFromFileName } from "../../session/paths.ts";
import { SessionFile } from "../../session/session-file.ts";
import { loadSessionFile, type LoadedSession } from "../../session/session-loader.ts";
import { acquireSessionLock, acquireSessionLockSync, type SessionLock } from "../../session/session-lock.ts";
import type { ResolvedSessionManagerOptions } from "../../session/session-options.ts";
import type { OpenedSession, StorageHooks } from "../session-storage.ts";
import { type FileSessionInit, FileSessionStorage } from "./file-session.ts";
import { type BodyWriter, ensureParent } from "./file-paths.ts";

/**
 * Hooks for a storage built before its manager exists (a lock taken, a file written): they reach
 * the manager once it is attached; until then a lost lock is remembered and a warning goes to the
 * options' handler.
 */
class HookRelay implements StorageHooks {
  private target: StorageHooks | null = null;
  private lostEarly: Error | null = null;

  constructor(
    private readonly options: ResolvedSessionManagerOptions,
    private readonly headerOf: () => SessionHeader,
    private readonly path: string,
  ) {}

  attach(target: StorageHooks): void {
    this.target = target;
    if (this.lostEarly !== null) target.lost(this.lostEarly);
  }
  warn(warning: StoreWarning): void {
    if (this.target !== null) this.target.warn(warning);
    else this.options.onWarning({ ...warning, path: warning.path ?? this.path });
  }
  lost(err: Error): void {
    if (this.target !== null) this.target.lost(err);
    else this.lostEarly = err;
  }
  header(): SessionHeader {
    return this.target !== null ? this.target.header() : this.headerOf();
  }
}

function opened(storage: FileSessionStorage, relay: HookRelay, header: SessionHeader, entries: SessionEntry[], loaded?: LoadedSession) {
  const session: OpenedSession = {
    header,
    entries,
    loadReport: loaded?.report ?? emptyLoadReport(),
    storage: (hooks) => {
      relay.attach(hooks);
      return storage;
    },
  };
  return session;
}

/**
 * Starts a brand-new session file at `path`: locks it, then writes the header (unless deferred),
 * the given entries, or the header and a copied body (a whole-session fork).
 */
export async function startNewFile(
  path: string,
  header: SessionHeader,
  options: ResolvedSessionManagerOptions,
  entries: SessionEntry[] | null,
  missingBlob?: (hash: string) => Buffer | null,
  body?: BodyWriter | null,
): Promise<OpenedSession> {
  ensureParent(path, options);
  const relay = new HookRelay(options, () => header, path);
  const file = new SessionFile(path, { fsync: options.fsync, now: options.now });
  // A new file's lock is taken synchronously: the same lock, without a round trip through the
  // thread pool (its first use in a process costs a few ms, a whole small fork).
  const lock = acquireSessionLockSync(path, { staleMs: options.lockStaleMs, onCompromised: (err) => relay.lost(err) });
  const init: FileSessionInit = {
    options,
    file,
    lock,
    headerWritten: false,
    readOnly: false,
    missingBlob,
    fileMatchesMemory: true,
    startNew: startNewFile,
  };
  const storage = new FileSessionStorage(init, relay);
  try {
    if (entries !== null && body) {
      // The copied lines may hold blob refs: the store learns where the fork lives before it is in place.
      storage.writer.writeHeaderAndBody((emit) => body(emit, () => storage.registerWithBlobs()));
    } else if (entries !== null) {
      storage.writer.writeWhole(entries);
    } else if (!options.deferUntilAssistant) {
      storage.writer.writeHeader();
    }
  } catch (err) {
    await storage.close();
    throw err;
  }
  return opened(storage, relay, header, entries ?? []);
}

/**
 * Opens a session file: scans it, migrates it, and (unless `readOnly`) takes its lock, repairs a
 * torn tail into quarantine and rewrites a legacy file as v3. An absent or empty file becomes a
 * new session; a file without a valid header is never overwritten (`BAD_HEADER`).
 */
export async function openFile(path: string, options: ResolvedSessionManagerOptions): Promise<OpenedSession> {
  const abs = resolve(path);
  const readOnly = options.readOnly;
  let header: SessionHeader | null = null;
  const relay = new HookRelay(options, () => header!, abs);
  let lock: SessionLock | null = null;
  let storage: FileSessionStorage | null = null;
  if (!readOnly) {
    ensureParent(abs, options);
    lock = await acquireSessionLock(abs, { staleMs: options.lockStaleMs, onCompromised: (err) => relay.lost(err) });
  }
  try {
    await recoverMovesOnOpen(abs, { readOnly, lockStaleMs: options.lockStaleMs });
    const blobs = new BlobStore(options.blobsDir, { fsync: options.fsync, readOnly });
    const warn = (w: StoreWarning) => relay.warn(w);
    const sources = new InlineImageSources(() => storage?.path ?? abs);
    const loaded = loadSessionFile(abs, {
      rehydrate: options.rehydrate,
      blobThreshold: options.prepare.blobThreshold,
      chunkSize: options.chunkSize,
      blobs,
      sources,
      warn,
      writable: !readOnly,
      fsync: options.fsync,
      key: options.encryption?.key ?? null,
    });
    const file = new SessionFile(abs, { fsync: options.fsync, now: options.now });
    if (loaded === null) {
      if (readOnly) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session at ${abs}`, { path: abs });
      const created = options.now();
      header = {
        type: "session",
        version: CURRENT_VERSION,
        id: idFromFileName(abs) ?? uuidv7(created.getTime()),
        timestamp: created.toISOString(),
        cwd: resolve(options.cwd ?? process.cwd()),
      };
      storage = new FileSessionStorage(
        { options, file, lock, headerWritten: false, readOnly, fileMatchesMemory: true, startNew: startNewFile },
        relay,
      );
      if (!options.deferUntilAssistant) storage.writer.writeWhole([]);
      return opened(storage, relay, header, []);
    }
    header = loaded.header;
    storage = new FileSessionStorage(
      {
        options,
        file,
        lock,
        headerWritten: true,
        readOnly,
        sources,
        fileMatchesMemory: isCleanCurrentFile(loaded),
        startNew: startNewFile,
        entryLines: loaded.parsed.records.length,
        scanned:
          readOnly && loaded.parsed.identity !== null
            ? { identity: loaded.parsed.identity, length: loaded.parsed.completeLength }
            : undefined,
      },
      relay,
    );
    if (!readOnly) {
      // A session written before the store kept a registry of referrers gets registered here.
      if (loaded.hasBlobRefs) storage.registerWithBlobs();
      storage.writer.repairOnOpen(loaded, loaded.entries, warn);
    }
    return opened(storage, relay, loaded.header, loaded.entries, loaded);
  } catch (err) {
    if (storage !== null) await storage.close();
    else await lock?.release();
    throw err;
  }
}

/** Nothing of the file was left out of memory, changed on reading, or is waiting to be repaired. */
export function isCleanCurrentFile(loaded: LoadedSession): boolean {
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
