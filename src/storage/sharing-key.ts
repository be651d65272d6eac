import type { SecretRedactor } from "../prepare/redact-secrets.ts";
import { type SharingRedactionOptions, sharingRedactor } from "../session/redact-for-sharing.ts";
import { REDACTION_KEY_FILE_ENV } from "../crypto/redaction-key-slot.ts";
import type { StorageBackend } from "./session-storage.ts";

/** A backend that keeps its own redaction key (a database): shared output is redacted with it. */
interface KeyedBackend {
  sharingRedactionKey(): Promise<Uint8Array | null>;
}

/**
 * The key shared output of `store` is redacted with, so its markers equal the ones written: a
 * database's own key (read, never created); undefined for the file tree (`sharingRedactor` reads
 * `<root>/redaction.key`) and when `$TRANSCRIPT_STORE_REDACTION_KEY_FILE` names the key to use.
 */
export async function sharingKeyOf(store: StorageBackend | null): Promise<Uint8Array | undefined> {
  if ((process.env[REDACTION_KEY_FILE_ENV] ?? "") !== "") return undefined;
  const keyed = store as Partial<KeyedBackend> | null;
  if (typeof keyed?.sharingRedactionKey !== "function") return undefined;
  return (await keyed.sharingRedactionKey()) ?? undefined;
}

/**
 * The redactor for output shared from `store` (export, the views, foreign exports, bundles), as its
 * `redact` option asks: null when false; else the store's key (`sharingKeyOf`, or `<root>/redaction.key`
 * for the file tree), unless the options give their own key or rules.
 */
export async function sharingRedactorOf(
  store: StorageBackend | null,
  root: string | undefined,
  redact: boolean | SharingRedactionOptions | undefined,
): Promise<SecretRedactor | null> {
  if (redact === false) return null;
  return sharingRedactor({
    ...(root === undefined ? {} : { root }),
    key: await sharingKeyOf(store),
    ...(redact === true || redact === undefined ? {} : redact),
  });
}
