import { BlobStore } from "../blob/blob-store.ts";
import { InlineImageSources } from "../session/inline-image-sources.ts";
import { loadSessionFile } from "../session/session-loader.ts";
import type { ResolvedPiOptions } from "./options.ts";
import type { SessionEntry, SessionHeader } from "./types.ts";

/**
 * A session read without its lock and without writing anything (a fork's source may be live; an
 * in-memory manager never writes): migrated to the current version, images resolved from the
 * blob store. Null for an absent or empty file; BAD_HEADER for a file without a session header.
 */
export function readSessionUnlocked(path: string, store: ResolvedPiOptions): { header: SessionHeader; entries: SessionEntry[] } | null {
  const engine = store.engine;
  const loaded = loadSessionFile(path, {
    rehydrate: "eager",
    blobThreshold: engine.prepare.blobThreshold,
    chunkSize: engine.chunkSize,
    blobs: new BlobStore(engine.blobsDir, { readOnly: true }),
    sources: new InlineImageSources(() => path),
    warn: (w) => engine.onWarning({ ...w, path: w.path ?? path }),
    writable: false,
  });
  if (loaded === null) return null;
  return { header: loaded.header as unknown as SessionHeader, entries: loaded.entries as unknown as SessionEntry[] };
}
