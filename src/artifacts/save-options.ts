import { TranscriptStoreError } from "../errors.ts";
import { isArtifactId } from "./artifact-names.ts";

/** Options of `save` (docs/artifacts.md, Writing artifacts). */
export interface SaveOptions {
  /** Part of the file name; sanitized to `[A-Za-z0-9_-]{1,64}`, else `tool`. */
  toolType: string;
  /** Alias that works wherever an id does; the newest artifact with a name wins. */
  name?: string;
  /** @default the first 200 characters of the content, line breaks as spaces */
  summary?: string;
  /** Time to live; once over, the artifact reads as absent and `cleanupExpired` removes it. */
  ttlMs?: number;
  /** @default text/plain for strings, application/json for other values, application/octet-stream for bytes */
  contentType?: string;
}

/** Options of a streaming writer: those of `save` except the tool type, given separately. */
export type WriterOptions = Omit<SaveOptions, "toolType">;

/** Longest alias accepted; aliases live only in metadata, the limit just keeps metadata small. */
export const MAX_NAME_CHARS = 1024;

/** Checks the options of `save` and of a writer once, one message per bad value. */
export function validateSaveOptions<T extends WriterOptions>(options: T): T {
  if (options === null || typeof options !== "object")
    throw new TranscriptStoreError("INVALID_OPTION", "artifact options must be an object");
  const { name, summary, ttlMs, contentType } = options;
  if (name !== undefined) {
    if (typeof name !== "string" || name.length === 0 || name.length > MAX_NAME_CHARS)
      throw new TranscriptStoreError("INVALID_OPTION", `name must be a non-empty string of at most ${MAX_NAME_CHARS} characters`);
    // A name that reads as an id or a URI would be shadowed by that id: refuse it up front.
    if (isArtifactId(name) || name.startsWith("artifact://"))
      throw new TranscriptStoreError("INVALID_OPTION", `name must not look like an artifact id or URI, got: ${name}`);
  }
  if (summary !== undefined && typeof summary !== "string") throw new TranscriptStoreError("INVALID_OPTION", "summary must be a string");
  if (ttlMs !== undefined && (typeof ttlMs !== "number" || !Number.isFinite(ttlMs) || ttlMs <= 0))
    throw new TranscriptStoreError("INVALID_OPTION", `ttlMs must be a positive finite number, got: ${String(ttlMs)}`);
  if (contentType !== undefined && (typeof contentType !== "string" || contentType.length === 0))
    throw new TranscriptStoreError("INVALID_OPTION", "contentType must be a non-empty string");
  return options;
}
