import { looksLikeBlobRef, toBlobRef, blobHashOf } from "../blob/blob-ref.ts";
import { mapImagePayloads, type PayloadKind } from "./image-shapes.ts";

/** Shortest base64 image payload that is moved to the blob store. @default 1024 */
export const DEFAULT_BLOB_THRESHOLD = 1024;

/** Bytes a stage wants stored before the line that references them is written. */
export interface BlobWrite {
  hash: string;
  bytes: Buffer;
}

/**
 * Decodes base64 only when re-encoding would give back the very same string. With `into` (large
 * enough), the bytes are decoded there and a view of it is returned, valid until its next use.
 */
export function decodeCanonicalBase64(text: string, into?: Buffer): Buffer | null {
  if (text.length === 0 || text.length % 4 !== 0) return null;
  if (text.includes("-") || text.includes("_")) return null;
  const pad = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const size = (text.length / 4) * 3 - pad;
  const bytes =
    into !== undefined && into.length >= size ? into.subarray(0, into.write(text, 0, size, "base64")) : Buffer.from(text, "base64");
  if (bytes.length !== size) return null;
  // Same length proves every character was a base64 digit; the last quantum proves zero pad bits.
  const tailBytes = 3 - pad;
  if (bytes.subarray(bytes.length - tailBytes).toString("base64") !== text.slice(-4)) return null;
  return bytes;
}

const BASE64_WHITESPACE = /[\r\n\t ]/g;

/**
 * Decodes base64 that is canonical once whitespace is removed (MIME-style line breaks every 76
 * characters, a trailing newline). Such a payload rehydrates to the canonical string, without the
 * whitespace: the same bytes, the image unchanged.
 */
export function decodeBase64Payload(text: string, into?: Buffer): Buffer | null {
  return decodeCanonicalBase64(text, into) ?? decodeWithoutWhitespace(text, into);
}

/** The second half of `decodeBase64Payload`, for a text already known not to be canonical as it stands. */
export function decodeWithoutWhitespace(text: string, into?: Buffer): Buffer | null {
  const compact = text.replace(BASE64_WHITESPACE, "");
  return compact.length === text.length ? null : decodeCanonicalBase64(compact, into);
}

/** The blob bytes for one payload, or null when the payload is not to be externalized. */
export function payloadBytes(payload: string, kind: PayloadKind, threshold: number): Buffer | null {
  if (looksLikeBlobRef(payload)) return null;
  if (kind === "dataUrl") return Buffer.from(payload, "utf8");
  if (payload.length < threshold) return null;
  return decodeBase64Payload(payload);
}

/** What externalization did: the new value, the blob writes it needs, payloads it had to keep. */
export interface ExternalizedImages<T> {
  value: T;
  blobs: BlobWrite[];
  /** Base64 payloads at or above the threshold that do not decode: kept inline, whole. */
  keptInline: number;
}

/**
 * Replaces image payloads with `blob:sha256:` refs and returns the blob writes they need; the
 * stage hashes but never writes. Payloads that are already refs are left untouched.
 */
export function externalizeImages<T>(value: T, threshold: number): ExternalizedImages<T> {
  const blobs: BlobWrite[] = [];
  let keptInline = 0;
  const next = mapImagePayloads(value, (payload, kind) => {
    const bytes = payloadBytes(payload, kind, threshold);
    if (bytes === null) {
      if (kind === "base64" && payload.length >= threshold && !looksLikeBlobRef(payload)) keptInline++;
      return payload;
    }
    const hash = blobHashOf(bytes);
    blobs.push({ hash, bytes });
    return toBlobRef(hash);
  });
  return { value: next, blobs, keptInline };
}

/** False when the serialized line proves it holds no image payload worth externalizing. */
export function externalizeNeeded(line: string, threshold: number): boolean {
  // Every image shape carries the word "image" (type, mimeType, image_url, media type).
  return line.includes("image") && (line.includes("data:image/") || line.length >= threshold);
}
