import type { ArtifactStore } from "../artifacts/artifact-store.ts";
import { BlobStore } from "../blob/blob-store.ts";
import { TranscriptStoreError } from "../errors.ts";
import type { SessionEntry } from "../format/types.ts";
import { blobReader, InlineImageSources } from "../session/inline-image-sources.ts";
import type { BlobReader } from "../session/rehydrate.ts";
import type { ResolvedSessionManagerOptions } from "../session/session-options.ts";
import { backendOf } from "./backends.ts";
import type { ForkRequest, OpenedSession, SessionStorage } from "./session-storage.ts";

/** A session that lives only in memory: appends are kept as given, nothing is written anywhere. */
export class MemorySessionStorage implements SessionStorage {
  readonly kind = "memory" as const;
  readonly path = null;
  readonly location = null;
  readonly blobs: BlobStore;
  readonly blobReader: BlobReader;

  constructor(options: ResolvedSessionManagerOptions) {
    this.blobs = new BlobStore(options.blobsDir, { fsync: options.fsync });
    this.blobReader = blobReader(this.blobs, new InlineImageSources(() => null));
  }

  persist(entry: SessionEntry): SessionEntry {
    return entry;
  }
  asStored(entry: SessionEntry): SessionEntry {
    return entry;
  }
  assertHeld(): void {}
  artifacts(): ArtifactStore | null {
    return null;
  }
  /**
   * A fork of an in-memory session is a new session in the store of its options (the file tree when
   * none is given), created through the seam and holding the entries, each persisted as an append is.
   */
  async fork(request: ForkRequest): Promise<OpenedSession> {
    const { header, entries, options } = request;
    const opened = await backendOf(options).create(header, options);
    return {
      ...opened,
      entries,
      storage: (hooks) => {
        const storage = opened.storage(hooks);
        for (const entry of entries) storage.persist(entry);
        return storage;
      },
    };
  }
  moveTo(): Promise<void> {
    throw new TranscriptStoreError("NO_SESSION", "An in-memory session has no files to move");
  }
  async flush(): Promise<void> {}
  async close(): Promise<void> {}
}
