import { TranscriptStoreError } from "../errors.ts";
import type { StorageBackend } from "./session-storage.ts";

/** One backend per URL in a process: every manager given the same URL shares its connections. */
const byUrl = new Map<string, StorageBackend>();

/** The backend a `store` URL names (`postgres://` or `postgresql://`). */
export function storeFromUrl(url: string): StorageBackend {
  const known = byUrl.get(url);
  if (known !== undefined) return known;
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new TranscriptStoreError("INVALID_OPTION", `store URL must start with postgres:// (got ${JSON.stringify(redactUrl(url))})`);
  }
  throw new TranscriptStoreError("INVALID_OPTION", "the PostgreSQL backend is not available in this build");
}

/** A URL without its password, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@]*@/i, "$1:***@");
}
