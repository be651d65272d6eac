import { REDACTION_KEY_FILE_ENV } from "../session/redaction-key-slot.ts";
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
