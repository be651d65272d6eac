import { resolve } from "node:path";
import type { SessionHeader } from "../../format/types.ts";
import { type DiscoveryOptions, listAllSessions, listSessions, resolveSession } from "../../session/discovery.ts";
import type { SessionInfo } from "../../session/session-info.ts";
import type { ResolvedSessionManagerOptions } from "../../session/session-options.ts";
import { collectGarbage } from "../../maintenance/gc.ts";
import type { OpenedSession, StorageBackend, StoreGcOptions, StoreGcReport } from "../session-storage.ts";
import { openFile, sessionPathFor, startNewFile } from "./file-start.ts";
import { forkFileByCopy } from "./fork-copy.ts";
import { FileLifecycle } from "../../lifecycle/file-lifecycle.ts";
import type { LifecycleDriver } from "../../lifecycle/lifecycle-driver.ts";

/** The embedded default: one JSONL file per session under `<sessionsDir>/<cwd bucket>/`, blobs in `<blobsDir>`. */
export const fileBackend: StorageBackend = {
  kind: "file",

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
    const discovery = { sessionsDir: options.sessionsDir, layout: options.layout, roots: options.roots, onWarning: options.onWarning };
    return cwd === null ? listAllSessions(discovery) : listSessions(cwd, discovery);
  },

  resolve(arg: string, cwd: string, options: ResolvedSessionManagerOptions & DiscoveryOptions): Promise<SessionInfo> {
    const discovery = { sessionsDir: options.sessionsDir, layout: options.layout, roots: options.roots, onWarning: options.onWarning };
    return resolveSession(arg, cwd, discovery);
  },

  lifecycle(options: ResolvedSessionManagerOptions): LifecycleDriver {
    return new FileLifecycle(options);
  },

  async gc(options: ResolvedSessionManagerOptions, gc: StoreGcOptions): Promise<StoreGcReport> {
    const report = await collectGarbage({ sessionRoots: [options.sessionsDir], blobsDir: options.blobsDir, ...gc });
    return { deleted: report.deleted, bytesFreed: report.bytesFreed };
  },
};
