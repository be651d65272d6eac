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
 * Strings are stored as their UTF-8 bytes, byte arrays as they are, everything else as compact
 * JSON (so the stored size is exactly the serialized size a spill threshold measured). A value
 * JSON cannot represent — circular, BigInt, a bare function — is a clear `INVALID_OPTION`, never
 * a TypeError from deep inside `JSON.stringify`.
 */
export function serializeValue(value: unknown): SerializedValue {
  if (typeof value === "string") return { bytes: Buffer.from(value, "utf8"), text: value, encoding: "text" };
  if (value instanceof Uint8Array) return { bytes: Buffer.from(value.buffer, value.byteOffset, value.byteLength), text: null, encoding: "bytes" };
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

/** Turns stored bytes back into the value that was saved. */
export function decodeValue(bytes: Buffer, encoding: ArtifactEncoding): unknown {
  if (encoding === "bytes") return bytes;
  const text = bytes.toString("utf8");
  return encoding === "json" ? JSON.parse(text) : text;
}
