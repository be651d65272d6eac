import { resolve } from "node:path";
import type { SessionHeader } from "../../format/types.ts";
import { type DiscoveryOptions, listAllSessions, listSessions, resolveSession } from "../../session/discovery.ts";
import type { SessionInfo } from "../../session/session-info.ts";
import type { ResolvedSessionManagerOptions } from "../../session/session-options.ts";
import { collectGarbage } from "../../maintenance/gc.ts";
import type { OpenedSession, StorageBackend, StoreGcOptions, StoreGcReport } from "../session-storage.ts";
import { sessionPathFor } from "./file-paths.ts";
import { openFile, startNewFile } from "./file-start.ts";
import { forkFileByCopy } from "./fork-copy.ts";
import { exportFile, locateFile } from "./file-export.ts";
import { importFile } from "./file-import.ts";
import type { ImportOutcome, SessionSnapshot } from "../session-snapshot.ts";
import { openListingReader } from "../../search/listing-reader.ts";
import { FileLifecycle } from "../../lifecycle/file-lifecycle.ts";
import type { LifecycleDriver } from "../../lifecycle/lifecycle-driver.ts";
import { supporting } from "../capabilities.ts";

/**
 * Runs a listing with the store's index as its source of listing facts when it has one (fresh
 * rows by stat, stale files read), else as before: reading each file's head and tail.
 */
async function withListingIndex<T>(
  options: ResolvedSessionManagerOptions & DiscoveryOptions,
  list: (discovery: DiscoveryOptions) => Promise<T>,
): Promise<T> {
  const discovery: DiscoveryOptions = {
    sessionsDir: options.sessionsDir,
    layout: options.layout,
    roots: options.roots,
    onWarning: options.onWarning,
  };
  const reader = await openListingReader({
    root: options.original.root,
    sessionsDir: options.sessionsDir,
    roots: options.roots,
    indexPath: options.indexPath,
    mode: options.listIndex,
    onWarning: options.onWarning,
  });
  if (reader === null) return list(discovery);
  try {
    return await list({ ...discovery, readInfos: reader.read });
  } finally {
    reader.close();
  }
}

/** The embedded default: one JSONL file per session under `<sessionsDir>/<cwd bucket>/`, blobs in `<blobsDir>`. */
export const fileBackend: StorageBackend = {
  kind: "file",
  supports: supporting("lifecycle", "index", "accounting", "quarantine", "encryption", "wholeSessionFork", "sessionFiles"),

  create(header: SessionHeader, options: ResolvedSessionManagerOptions): Promise<OpenedSession> {
    return startNewFile(sessionPathFor(header, options), header, options, null);
  },

  open(ref: string, options: ResolvedSessionManagerOptions): Promise<OpenedSession> {
    return openFile(resolve(ref), options);
  },

  forkWhole(ref: string, cwd: string, options: ResolvedSessionManagerOptions): Promise<OpenedSession | null> {
    return forkFileByCopy(ref, cwd, options);
  },

  list(cwd: string | null, options: ResolvedSessionManagerOptions & DiscoveryOptions): Promise<SessionInfo[]> {
    return withListingIndex(options, (discovery) => (cwd === null ? listAllSessions(discovery) : listSessions(cwd, discovery)));
  },

  resolve(arg: string, cwd: string | undefined, options: ResolvedSessionManagerOptions & DiscoveryOptions): Promise<SessionInfo> {
    return withListingIndex(options, (discovery) => resolveSession(arg, cwd, discovery));
  },

  lifecycle(options: ResolvedSessionManagerOptions): LifecycleDriver {
    return new FileLifecycle(options);
  },

  async gc(options: ResolvedSessionManagerOptions, gc: StoreGcOptions): Promise<StoreGcReport> {
    const report = await collectGarbage({ sessionRoots: [options.sessionsDir], blobsDir: options.blobsDir, ...gc });
    return { deleted: report.deleted, bytesFreed: report.bytesFreed };
  },

  async locate(id: string, options: ResolvedSessionManagerOptions): Promise<string | null> {
    return locateFile(id, options);
  },

  async has(id: string, options: ResolvedSessionManagerOptions): Promise<boolean> {
    return locateFile(id, options) !== null;
  },

  exportSnapshot(ref: string, options: ResolvedSessionManagerOptions): Promise<SessionSnapshot> {
    return exportFile(ref, options);
  },

  importSnapshot(snapshot: SessionSnapshot, options: ResolvedSessionManagerOptions): Promise<ImportOutcome> {
    return importFile(snapshot, options);
  },
};
