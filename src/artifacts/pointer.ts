import { TranscriptStoreError } from "../errors.ts";
import type { ArtifactStore } from "./artifact-store.ts";
import { serializeValue } from "./artifact-values.ts";
import { cutChars, type ArtifactRef } from "./metadata.ts";
import type { SaveOptions } from "./save-options.ts";

/** Serialized size (UTF-8 bytes) from which `spill` stores a value instead of returning it. */
export const DEFAULT_MAX_INLINE_BYTES = 51_200;
/** Characters of the serialized value kept in a pointer's preview. */
export const DEFAULT_PREVIEW_CHARS = 200;

/** Options of `spill`: those of `save` (the name becomes an alias) plus the threshold and preview length. */
export interface SpillOptions extends SaveOptions {
  /** Values whose serialized UTF-8 size is below this stay inline. @default 51200 */
  maxInlineBytes?: number;
  /** @default 200 */
  previewChars?: number;
}

/** The envelope a model sees instead of a too-big tool output. */
export interface ArtifactPointer {
  /** `artifact://<id>`: what `get`, `getArtifact` and `resolveInternalUrl` accept. */
  pointer: string;
  /** The first `previewChars` characters of the serialized value, so the model can judge it before fetching. */
  preview: string;
  /** UTF-8 bytes of the serialized value. */
  sizeBytes: number;
  note: string;
  /** The alias, when one was given. */
  name?: string;
}

/** `spill` returns the value itself or a pointer envelope. */
export type SpillResult<T> = T | ArtifactPointer;

/** What `toModelHint` returns (the field names models of the seed system were prompted with). */
export interface ModelHint {
  artifact_reference: string;
  summary: string;
  hint: string;
  size_bytes: number;
}

const POINTER = /^artifact:\/\/\d{1,15}$/;

function nonNegativeInteger(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
    throw new TranscriptStoreError("INVALID_OPTION", `${name} must be a non-negative integer, got: ${String(value)}`);
  return value;
}

/**
 * Pointer envelopes (docs/artifacts.md, Pointer envelopes). The value is serialized once (strings
 * as they are, other values as JSON) to measure it; below the threshold the very same value is
 * returned, else it is saved and the envelope returned. An unserializable value (circular) throws
 * `INVALID_OPTION`; a value with no JSON form at all (`undefined`, a function) has nothing to spill
 * and is returned as is.
 */
export function spillValue<T>(store: ArtifactStore, value: T, options: SpillOptions): SpillResult<T> {
  if (options === null || typeof options !== "object")
    throw new TranscriptStoreError("INVALID_OPTION", "spill needs options with a toolType");
  const maxInlineBytes = nonNegativeInteger(options.maxInlineBytes, "maxInlineBytes", DEFAULT_MAX_INLINE_BYTES);
  const previewChars = nonNegativeInteger(options.previewChars, "previewChars", DEFAULT_PREVIEW_CHARS);
  if (value === undefined || typeof value === "function" || typeof value === "symbol") return value;
  const serialized = serializeValue(value);
  if (serialized.bytes.length < maxInlineBytes) return value;
  const { maxInlineBytes: _max, previewChars: _preview, ...saveOptions } = options;
  const ref = store.saveSerialized(serialized, saveOptions);
  const text = serialized.text ?? serialized.bytes.toString("utf8", 0, previewChars * 4);
  const envelope: ArtifactPointer = {
    pointer: ref.uri,
    preview: cutChars(text, previewChars),
    sizeBytes: ref.sizeBytes,
    note:
      `Output too large for the context (${ref.sizeBytes} bytes); the full value is stored as ${ref.uri}. ` +
      `Call getArtifact with this pointer${ref.name === undefined ? "" : ` or the name "${ref.name}"`} to read it.`,
  };
  if (ref.name !== undefined) envelope.name = ref.name;
  return envelope;
}

/**
 * UTF-8 size of a value as `spill` would measure it, for callers deciding before they call:
 * strings as they are, bytes by length, other values as compact JSON. A value that cannot be
 * serialized (circular, BigInt) or has no JSON form counts as 0 instead of throwing.
 */
export function approxByteSize(value: unknown): number {
  if (typeof value === "string") return Buffer.byteLength(value, "utf8");
  if (value instanceof Uint8Array) return value.byteLength;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? 0 : Buffer.byteLength(text, "utf8");
  } catch {
    return 0;
  }
}

/** True for an `artifact://<id>` string or a pointer envelope returned by `spill`. */
export function isPointer(value: unknown): value is string | ArtifactPointer {
  if (typeof value === "string") return POINTER.test(value);
  if (value === null || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  return typeof v.pointer === "string" && POINTER.test(v.pointer) && typeof v.sizeBytes === "number";
}

/** The compact reference a model is given in place of an artifact's content. */
export function toModelHint(ref: ArtifactRef): ModelHint {
  return {
    artifact_reference: ref.uri,
    summary: ref.summary,
    hint:
      `Full content (${ref.sizeBytes} bytes) is stored as ${ref.uri}; ` +
      `call getArtifact with "${ref.uri}" or read that URL to retrieve it.`,
    size_bytes: ref.sizeBytes,
  };
}
