import type { SecretRedactor } from "../prepare/redact-secrets.ts";
import type { StoreKey } from "../session/line-cipher.ts";
import type { StorageBackend } from "./session-storage.ts";
import type { PgRedactOptions, PgRedactReport } from "./postgres/pg-redact.ts";
import type { PgRekeyReport } from "./postgres/pg-rekey.ts";

/**
 * What a database backend offers `rekey --store` and `redact --store`: whole-session rewrites in one
 * transaction under the session's lease, and the store's own redaction key. The CLI finds them on the
 * backend it was given (it names no backend: the registry picks it).
 */
export interface StoredRewrites {
  rekeySession(ref: string, keys: { from: StoreKey; to: StoreKey }): Promise<PgRekeyReport>;
  redactSession(id: string, redactor: SecretRedactor, options: PgRedactOptions): Promise<PgRedactReport>;
  sessionIdOf(ref: string): Promise<string>;
  redactionKey(): Promise<Uint8Array>;
  sharingRedactionKey(): Promise<Uint8Array | null>;
  /** Indexes these sessions again at once (redact rewrote them or scrubbed their artifacts): no derived row keeps the old text. */
  reindexSearch(ids: readonly string[]): Promise<void>;
}

/** The store's rewrites, or null when it offers none (`USAGE` for the command that needs them). */
export function storedRewritesOf(store: StorageBackend | null): (StorageBackend & StoredRewrites) | null {
  const s = store as Partial<StoredRewrites> | null;
  return s !== null && typeof s.rekeySession === "function" && typeof s.redactSession === "function"
    ? (store as StorageBackend & StoredRewrites)
    : null;
}
