import { BlobStore } from "../blob/blob-store.ts";
import { TranscriptStoreError } from "../errors.ts";
import { InlineImageSources } from "../session/inline-image-sources.ts";
import { loadSessionFile } from "../session/session-loader.ts";
import type { ResolvedPiOptions } from "./options.ts";
import type { SessionEntry } from "./types.ts";

/**
 * The entries of a session to fork, read without its lock and without writing anything (the
 * source may be live), migrated to the current version, images resolved from the blob store.
 * An absent or empty file → SESSION_NOT_FOUND; a file without a session header → BAD_HEADER.
 */
export function forkSource(sourcePath: string, store: ResolvedPiOptions): SessionEntry[] {
  const engine = store.engine;
  const loaded = loadSessionFile(sourcePath, {
    rehydrate: "eager",
    blobThreshold: engine.prepare.blobThreshold,
    chunkSize: engine.chunkSize,
    blobs: new BlobStore(engine.blobsDir),
    sources: new InlineImageSources(() => sourcePath),
    warn: (w) => engine.onWarning({ ...w, path: w.path ?? sourcePath }),
    writable: false,
  });
  if (loaded === null) throw new TranscriptStoreError("SESSION_NOT_FOUND", `Cannot fork: source session file is empty or absent: ${sourcePath}`, { path: sourcePath });
  return loaded.entries as unknown as SessionEntry[];
}
