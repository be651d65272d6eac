import { TranscriptStoreError, type WarningHandler } from "../errors.ts";
import type { SessionHeader } from "../format/types.ts";
import { readStoreSettings } from "./store-settings.ts";
import type { ResolvedEncryption } from "./encryption-options.ts";
import { headerEncryption } from "../crypto/line-cipher.ts";

/**
 * The store-wide setting: `{"encryption": {"require": true}}` in the store's config
 * (`<root>/config.json`, read with the store's other privacy settings: store-settings.ts; a value
 * that is not a boolean is `INVALID_CONFIG`). True: every session of the store must be encrypted.
 */
export function storeRequiresEncryption(root: string): boolean {
  return readStoreSettings(root).requireEncryption;
}

/** Whether plain sessions are refused: `encryption.require` or the store-wide setting. */
export function encryptionRequired(encryption: ResolvedEncryption | null, root: string): boolean {
  return encryption?.require === true || storeRequiresEncryption(root);
}

/**
 * The check of an opened session's header against the encryption policy (downgrade by
 * replacement: a plain file of the same id put in place of an encrypted one): a plain session
 * is `NOT_ENCRYPTED` where encryption is required, and served with a `PLAIN_SESSION` warning when
 * the caller passed a key. An encrypted header passes (its lines are authenticated on read).
 */
export function checkPlainSession(
  header: SessionHeader,
  encryption: ResolvedEncryption | null,
  root: string,
  warn: WarningHandler,
  where: string,
): void {
  if (headerEncryption(header) !== null) return;
  if (encryptionRequired(encryption, root)) {
    throw new TranscriptStoreError(
      "NOT_ENCRYPTED",
      `Session ${header.id} is not encrypted and encryption is required (a plain file put in place of an encrypted one?); nothing served`,
      { path: where },
    );
  }
  if (encryption !== null) {
    warn({
      code: "PLAIN_SESSION",
      message: `Session ${header.id} is not encrypted: the key was not used, it is served in clear`,
      path: where,
    });
  }
}
