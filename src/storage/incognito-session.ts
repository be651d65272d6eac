import { join } from "node:path";
import { ArtifactStore } from "../artifacts/artifact-store.ts";
import { MemoryBlobs } from "../blob/memory-blobs.ts";
import type { SessionEntry, SessionHeader } from "../format/types.ts";
import { emptyLoadReport } from "../format/load-report.ts";
import type { ResolvedSessionManagerOptions } from "../session/session-options.ts";
import type { ForkRequest, OpenedSession, SessionStorage } from "./session-storage.ts";
import { removeWorkingDir, workingDirs } from "./working-dirs.ts";

/** `<tmp>/transcript-store-incognito-<uid>/<pid>@<host>-<random>/`: removed on close and at exit, reclaimed after a kill. */
const INCOGNITO_DIRS = workingDirs("incognito", "incognito artifacts");

/**
 * An incognito session: entries and blobs in memory, artifacts (and agent outputs) in a private
 * temp directory (mode 0700, created on first use) that `close()` removes, and so does the
 * process's exit without it; a killed process's is removed by the next one that makes one
 * (working-dirs.ts). Nothing reaches the store root, its blob directory or a database; a fork is
 * incognito too.
 */
export class IncognitoSessionStorage implements SessionStorage {
  readonly kind = "memory" as const;
  readonly path = null;
  readonly location = null;
  readonly blobs = new MemoryBlobs();
  readonly blobReader = this.blobs;
  private artifactStore: ArtifactStore | null = null;
  private tempDir: string | null = null;
  private closed = false;

  constructor(private readonly options: ResolvedSessionManagerOptions) {}

  persist(entry: SessionEntry): SessionEntry {
    return entry;
  }
  asStored(entry: SessionEntry): SessionEntry {
    return entry;
  }
  assertHeld(): void {}
  /** Artifacts in a private temp directory (created here, removed on close); null once closed. */
  artifacts(): ArtifactStore | null {
    if (this.closed) return null;
    if (this.artifactStore === null) {
      this.tempDir = INCOGNITO_DIRS.make();
      this.artifactStore = new ArtifactStore(join(this.tempDir, "artifacts"), {
        onWarning: this.options.onWarning,
        now: () => this.options.now().getTime(),
      });
    }
    return this.artifactStore;
  }
  /** The temp directory holding the artifacts, or null when none was needed (yet). */
  get artifactsTempDir(): string | null {
    return this.tempDir;
  }
  async fork(request: ForkRequest): Promise<OpenedSession> {
    return incognitoSession(request.header, request.entries, request.options);
  }
  /** Nothing is stored: the new cwd is only recorded in the header. */
  async moveTo(): Promise<void> {}
  async flush(): Promise<void> {}
  async close(): Promise<void> {
    this.closed = true;
    this.blobs.clear();
    if (this.tempDir !== null) removeWorkingDir(this.tempDir);
    this.tempDir = null;
    this.artifactStore = null;
  }
}

/** A new incognito session with `entries` (a fork's) and this header. */
export function incognitoSession(header: SessionHeader, entries: SessionEntry[], options: ResolvedSessionManagerOptions): OpenedSession {
  const storage = new IncognitoSessionStorage(options);
  return { header, entries, loadReport: emptyLoadReport(), storage: () => storage };
}
