import { TranscriptStoreError } from "../errors.ts";
import type { ArtifactEncoding } from "./metadata.ts";

/** A value as it is written to an artifact file. */
export interface SerializedValue {
  bytes: Buffer;
  /** The text form (for summaries and previews); null for raw bytes. */
  text: string | null;
  encoding: ArtifactEncoding;
}

/**
 * Throws `INVALID_OPTION` when `text` holds a lone surrogate: UTF-8 cannot hold one (it would be
 * written as U+FFFD and read back as a different string), so such text is refused before anything
 * is written. Every other code unit (NUL, controls, non-characters) is stored exactly.
 */
export function assertWellFormedText(text: string, what: string): void {
  if (!(text as string & { isWellFormed(): boolean }).isWellFormed())
    throw new TranscriptStoreError("INVALID_OPTION", `${what} holds a lone surrogate (not Unicode text); it cannot be stored as UTF-8`);
}

/**
 * Strings are stored as their UTF-8 bytes (refused when they hold a lone surrogate), byte arrays as they are, everything else as compact
 * JSON (so the stored size is exactly the serialized size a spill threshold measured). A value
 * JSON cannot represent — circular, BigInt, a bare function — is a clear `INVALID_OPTION`, never
 * a TypeError from deep inside `JSON.stringify`.
 */
export function serializeValue(value: unknown): SerializedValue {
  if (typeof value === "string") {
    assertWellFormedText(value, "Artifact text");
    return { bytes: Buffer.from(value, "utf8"), text: value, encoding: "text" };
  }
  if (value instanceof Uint8Array)
    return { bytes: Buffer.from(value.buffer, value.byteOffset, value.byteLength), text: null, encoding: "bytes" };
  const text = stringifyJson(value);
  return { bytes: Buffer.from(text, "utf8"), text, encoding: "json" };
}

/** `JSON.stringify` that reports unserializable values as `INVALID_OPTION`. */
export function stringifyJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new TranscriptStoreError("INVALID_OPTION", `Value cannot be stored as an artifact: ${(err as Error).message}`, { cause: err });
  }
  if (text === undefined) throw new TranscriptStoreError("INVALID_OPTION", `Value of type ${typeof value} cannot be stored as an artifact`);
  return text;
}

/**
 * Decodes stored bytes as one string. Past the engine's longest string (~512 M characters) that
 * is impossible: a coded error pointing at paged reads, never a bare RangeError.
 */
export function bytesToText(bytes: Buffer, id: string): string {
  try {
    return bytes.toString("utf8");
  } catch (err) {
    throw new TranscriptStoreError(
      "PERSISTENCE_FAILED",
      `Artifact ${id} (${bytes.length} bytes) is too large to return as one string; read it in pages with read(id, { offset, limit })`,
      { cause: err },
    );
  }
}

/** Turns stored bytes back into the value that was saved; `text` is the decoded form when known. */
export function decodeValue(bytes: Buffer, encoding: ArtifactEncoding, text: string): unknown {
  if (encoding === "bytes") return bytes;
  return encoding === "json" ? JSON.parse(text) : text;
}
