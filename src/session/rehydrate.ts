import type { BlobStore } from "../blob/blob-store.ts";
import { isBlobRef, looksLikeBlobRef } from "../blob/blob-ref.ts";
import { isKeyedBlobRef } from "../blob/keyed-blob-ref.ts";
import { TranscriptStoreError, type StoreWarning } from "../errors.ts";
import { mapImagePayloads } from "../prepare/image-shapes.ts";

/**
 * Resolves blob refs in the image shapes of docs/format.md (Blob refs) back to their original strings (base64 of the
 * bytes, or the data URL). A missing, corrupt or malformed ref stays as it is and is reported as a
 * warning; rehydration never throws for bad data. Same object back when there is nothing to resolve.
 * Bytes are handed out only when they hash to the ref (the store re-hashes a blob file once, and
 * again whenever the file changes): a zero-length, truncated or overwritten blob is `BLOB_CORRUPT`,
 * never an empty or wrong image.
 */
/** What rehydration reads blobs through: the store, or a lazy session's view of it. */
/** How `open` gives images back: all at once (`eager`), or on demand (`lazy`). */
export type RehydrateMode = "eager" | "lazy";

export type BlobReader = Pick<BlobStore, "getVerifiedSync" | "pathOf">;

/** What an encrypted session's keyed refs are read through (`KeyedBlobs`): authenticated bytes or `BLOB_CORRUPT`. */
export type KeyedBlobReader = { getSync(ref: string): Buffer | null; pathOf(ref: string): string };

/** `keyed`: an encrypted session's keyed blobs; without it a keyed ref stays as it is. */
export function rehydrateValue<T>(
  value: T,
  blobs: BlobReader,
  warn: (warning: StoreWarning) => void,
  keyed: KeyedBlobReader | null = null,
): T {
  return mapImagePayloads(value, (payload, kind) => {
    if (keyed !== null && isKeyedBlobRef(payload))
      return resolveRef(payload, kind, { getVerifiedSync: (r) => keyed.getSync(r), pathOf: keyed.pathOf.bind(keyed) }, warn);
    if (!looksLikeBlobRef(payload)) return payload;
    if (!isBlobRef(payload)) {
      warn({ code: "INVALID_BLOB_REF", message: `Ignoring malformed blob ref ${JSON.stringify(payload.slice(0, 100))}` });
      return payload;
    }
    return resolveRef(payload, kind, blobs, warn);
  });
}

/** The payload a well-formed ref stands for; the ref itself (and a warning) when its blob is missing, corrupt or too large. */
function resolveRef(payload: string, kind: string, blobs: BlobReader, warn: (warning: StoreWarning) => void): string {
  let bytes: Buffer | null;
  try {
    bytes = blobs.getVerifiedSync(payload);
  } catch (err) {
    if (err instanceof TranscriptStoreError && err.code === "BLOB_CORRUPT") {
      warn({ code: "BLOB_CORRUPT", message: `${err.message}; the ref is kept`, path: blobs.pathOf(payload) });
      return payload;
    }
    warn({ code: "BLOB_MISSING", message: `Blob ${payload} unreadable: ${(err as Error).message}`, path: blobs.pathOf(payload) });
    return payload;
  }
  if (bytes === null) {
    warn({ code: "BLOB_MISSING", message: `Blob ${payload} is missing; the ref is kept`, path: blobs.pathOf(payload) });
    return payload;
  }
  try {
    return kind === "base64" ? bytes.toString("base64") : bytes.toString("utf8");
  } catch (err) {
    // Past V8's string limit (a giant image streamed to the blob store): it stays a ref.
    const message = `Blob ${payload} is too large for one string; the ref is kept: ${(err as Error).message}`;
    warn({ code: "IMAGE_TOO_LARGE", message, path: blobs.pathOf(payload) });
    return payload;
  }
}
