import { parseBlobRef, toBlobRef, blobHashOf } from "../../blob/blob-ref.ts";
import { TranscriptStoreError } from "../../errors.ts";
import type { PgBlobs } from "./db/index.ts";
import type { Blobs } from "../session-storage.ts";

/**
 * The blobs one open session reads synchronously (rehydration is synchronous): those its rows
 * reference, fetched when it was opened, and those its appends stored. Bytes are handed out only
 * when they hash to their name (`BLOB_CORRUPT` otherwise): fetched rows are hashed once, when they
 * arrive; an append's own blobs were named by hashing these very bytes.
 */
export class PgBlobCache {
  private readonly bytes = new Map<string, Buffer>();
  /** Fetched rows whose bytes do not hash to their name. */
  private readonly corrupt = new Set<string>();

  constructor(private readonly where: string) {}

  /** An append's blob (its name is the hash of these bytes): kept as a view, not copied. */
  remember(hash: string, bytes: Uint8Array): void {
    this.bytes.set(hash, Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    this.corrupt.delete(hash);
  }

  cached(hash: string): Buffer | null {
    return this.bytes.get(hash) ?? null;
  }

  pathOf(hashOrRef: string): string {
    return `${this.where}#blob:${parseBlobRef(hashOrRef)}`;
  }

  getVerifiedSync(hashOrRef: string): Buffer | null {
    const hash = parseBlobRef(hashOrRef);
    if (this.corrupt.has(hash)) throw new TranscriptStoreError("BLOB_CORRUPT", `Blob ${hash} does not hash to its name`);
    return this.bytes.get(hash) ?? null;
  }

  /** Fetches the named blobs into the cache (one query, and parts of large ones: `PgBlobs.getMany`). */
  async fetch(blobs: PgBlobs, hashes: Iterable<string>): Promise<void> {
    const wanted = [...hashes].filter((h) => !this.bytes.has(h) && !this.corrupt.has(h));
    if (wanted.length === 0) return;
    for (const [hash, bytes] of await blobs.getMany(wanted)) {
      if (blobHashOf(bytes) === hash) this.bytes.set(hash, bytes);
      else this.corrupt.add(hash);
    }
  }
}

/** `PgBlobs` as the public `Blobs` surface (the same as the file store's). */
export function blobsView(blobs: PgBlobs): Blobs {
  return {
    async put(bytes) {
      const { hash, existed } = await blobs.store(bytes);
      return { hash, ref: toBlobRef(hash), existed };
    },
    get: (hashOrRef) => blobs.get(hashOrRef, { verify: true }),
    has: (hashOrRef) => blobs.has(hashOrRef),
    async *list() {
      yield* await blobs.list();
    },
    delete: (hashOrRef) => blobs.delete(hashOrRef),
  };
}
