import { TranscriptStoreError } from "../errors.ts";

/**
 * A keyed blob ref (an encrypted session's images): `blob:hmac-sha256:<64 lowercase hex>`, the
 * HMAC-SHA256 of the bytes under a key derived from the store key (keyed-blob-cipher.ts). It names
 * the blob file `<blobsDir>/<hex>` like a plain ref, but reveals nothing of the content: it is not
 * the sha256 of anything one can guess without the key.
 */
export const KEYED_BLOB_REF_PREFIX = "blob:hmac-sha256:";

const HEX_RE = /^[0-9a-f]{64}$/;

/** True for a well-formed `blob:hmac-sha256:<64 lowercase hex>` string. */
export function isKeyedBlobRef(value: unknown): boolean {
  return (
    typeof value === "string" &&
    value.length === KEYED_BLOB_REF_PREFIX.length + 64 &&
    value.startsWith(KEYED_BLOB_REF_PREFIX) &&
    HEX_RE.test(value.slice(KEYED_BLOB_REF_PREFIX.length))
  );
}

/** The 64 hex digits of a keyed ref (or of a bare hex name); anything else is `INVALID_BLOB_REF`. */
export function parseKeyedBlobRef(refOrHex: string): string {
  const hex = refOrHex.startsWith(KEYED_BLOB_REF_PREFIX) ? refOrHex.slice(KEYED_BLOB_REF_PREFIX.length) : refOrHex;
  if (!HEX_RE.test(hex)) {
    throw new TranscriptStoreError(
      "INVALID_BLOB_REF",
      `Invalid keyed blob ref ${JSON.stringify(refOrHex.slice(0, 100))}: expected ${KEYED_BLOB_REF_PREFIX}<64 lowercase hex>`,
    );
  }
  return hex;
}

/** The keyed ref string for 64 hex digits. */
export function toKeyedBlobRef(hex: string): string {
  return KEYED_BLOB_REF_PREFIX + hex;
}

/**
 * The one keyed-ref extractor: calls `visit` with the hex of every well-formed keyed ref in `text`
 * (a string or the raw bytes of any line, encrypted lines included: they list their keyed refs in
 * clear, docs/format.md), in order, repeats included.
 */
export function forEachKeyedBlobRef(text: string | Buffer, visit: (hex: string) => void): void {
  const skip = KEYED_BLOB_REF_PREFIX.length;
  for (let at = text.indexOf(KEYED_BLOB_REF_PREFIX); at !== -1; at = text.indexOf(KEYED_BLOB_REF_PREFIX, at + skip)) {
    const start = at + skip;
    const hex = typeof text === "string" ? text.slice(start, start + 64) : text.toString("latin1", start, start + 64);
    if (HEX_RE.test(hex)) visit(hex);
  }
}

/** The distinct hex names the keyed refs in `text` carry, in order of first appearance. */
export function keyedBlobRefsIn(text: string | Buffer): string[] {
  const found = new Set<string>();
  forEachKeyedBlobRef(text, (hex) => found.add(hex));
  return [...found];
}
