import { createHash } from "node:crypto";
import { TranscriptStoreError } from "../errors.ts";

/** Every blob ref starts with this prefix, followed by 64 lowercase hex digits. */
export const BLOB_REF_PREFIX = "blob:sha256:";

const HASH_RE = /^[0-9a-f]{64}$/;

/** True for a well-formed `blob:sha256:<64 lowercase hex>` string. */
export function isBlobRef(value: unknown): boolean {
  return (
    typeof value === "string" &&
    value.length === BLOB_REF_PREFIX.length + 64 &&
    value.startsWith(BLOB_REF_PREFIX) &&
    HASH_RE.test(value.slice(BLOB_REF_PREFIX.length))
  );
}

/** True for anything that claims to be a blob ref, well-formed or not. */
export function looksLikeBlobRef(value: unknown): boolean {
  return typeof value === "string" && value.startsWith(BLOB_REF_PREFIX);
}

/** True for exactly 64 lowercase hex digits. */
export function isBlobHash(value: unknown): value is string {
  return typeof value === "string" && HASH_RE.test(value);
}

/**
 * Returns the hash of a ref or a bare hash. Anything that is not exactly 64 lowercase hex is
 * rejected with `INVALID_BLOB_REF`, so a ref can never address a path outside the blob directory.
 */
export function parseBlobRef(refOrHash: string): string {
  const hash = refOrHash.startsWith(BLOB_REF_PREFIX) ? refOrHash.slice(BLOB_REF_PREFIX.length) : refOrHash;
  if (!HASH_RE.test(hash)) {
    throw new TranscriptStoreError(
      "INVALID_BLOB_REF",
      `Invalid blob ref ${JSON.stringify(refOrHash.slice(0, 100))}: expected ${BLOB_REF_PREFIX}<64 lowercase hex>`,
    );
  }
  return hash;
}

/** The one blob hasher: the sha256 of `bytes` as 64 lowercase hex, the name a blob is stored under. */
export function blobHashOf(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The ref string for a hash. */
export function toBlobRef(hash: string): string {
  return BLOB_REF_PREFIX + hash;
}

/**
 * The one blob-ref extractor: calls `visit` with the hash of every well-formed
 * `blob:sha256:<64 lowercase hex>` in `text` (a string, or raw bytes of any line, malformed ones
 * included), in order, repeats included. A prefix not followed by 64 lowercase hex is passed over.
 */
export function forEachBlobRef(text: string | Buffer, visit: (hash: string) => void): void {
  const skip = BLOB_REF_PREFIX.length;
  for (let at = text.indexOf(BLOB_REF_PREFIX); at !== -1; at = text.indexOf(BLOB_REF_PREFIX, at + skip)) {
    const start = at + skip;
    const hash = typeof text === "string" ? text.slice(start, start + 64) : text.toString("latin1", start, start + 64);
    if (HASH_RE.test(hash)) visit(hash);
  }
}

/** The distinct hashes the blob refs in `text` name, in order of first appearance (`forEachBlobRef`). */
export function blobRefsIn(text: string | Buffer): string[] {
  const found = new Set<string>();
  forEachBlobRef(text, (hash) => found.add(hash));
  return [...found];
}
