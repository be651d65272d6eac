import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";
import { TranscriptStoreError } from "../errors.ts";
import { isRecord, type RawRecord, type SessionHeader } from "../format/types.ts";

/** The scheme named in an encrypted session's header. */
export const ENCRYPTION_SCHEME = "aes-256-gcm+hkdf-sha256/v1";

/** What an encrypted session's header carries in clear (`header.encryption`). */
export interface HeaderEncryption {
  scheme: string;
  keyId: string;
}

/** A store key and the id recorded in the headers it encrypts. */
export interface StoreKey {
  key: Buffer;
  keyId: string;
}

/** A key id derived from the key itself (when none is given): names the key, reveals nothing of it. */
export function keyIdOf(key: Buffer): string {
  return createHmac("sha256", key).update("transcript-store key id v1").digest("hex").slice(0, 16);
}

/** The `encryption` field of a header, or null for a plain session; a malformed one is `DECRYPT_FAILED`. */
export function headerEncryption(header: SessionHeader): HeaderEncryption | null {
  const value = (header as Record<string, unknown>).encryption;
  if (value === undefined) return null;
  if (!isRecord(value) || typeof value.keyId !== "string" || value.scheme !== ENCRYPTION_SCHEME) {
    throw new TranscriptStoreError("DECRYPT_FAILED", `Unknown encryption in the header: ${JSON.stringify(value).slice(0, 200)}`);
  }
  return { scheme: value.scheme, keyId: value.keyId };
}

/**
 * Seals and opens the entry lines of one session: AES-256-GCM under a key derived with HKDF from
 * the store key and the session id, each line with a fresh 96-bit IV and, as associated data, the
 * session id and the line's ordinal among the entry lines (1-based), so a line moved, swapped,
 * dropped from the middle or copied into another session fails authentication.
 */
export class LineCipher {
  private readonly key: Buffer;

  constructor(
    store: StoreKey,
    private readonly sessionId: string,
  ) {
    this.key = Buffer.from(hkdfSync("sha256", store.key, Buffer.from(sessionId), "transcript-store session lines v1", 32));
  }

  /** The encrypted line (JSON, without `\n`) for the plain JSON line `plain` at `ordinal`. */
  seal(plain: string, ordinal: number): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(this.aad(ordinal));
    const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    const tag = cipher.getAuthTag();
    return `{"type":"encrypted","v":1,"iv":"${iv.toString("base64")}","ct":"${ct.toString("base64")}","tag":"${tag.toString("base64")}"}`;
  }

  /** The record an encrypted line at `ordinal` holds; anything else, or a failed tag, is `DECRYPT_FAILED`. */
  open(record: RawRecord, ordinal: number): RawRecord {
    const value: unknown = JSON.parse(this.openText(record, ordinal));
    if (!isRecord(value) || typeof value.type !== "string") throw this.failure(ordinal, "does not hold a record");
    return value as RawRecord;
  }

  private failure(ordinal: number, why: string): TranscriptStoreError {
    return new TranscriptStoreError("DECRYPT_FAILED", `Entry line ${ordinal} of session ${this.sessionId} ${why}; nothing is served`);
  }

  /** The plain JSON line an encrypted line at `ordinal` holds (`DECRYPT_FAILED` as `open`). */
  openText(record: RawRecord, ordinal: number): string {
    const fail = (why: string) => this.failure(ordinal, why);
    if (record.type !== "encrypted" || record.v !== 1) throw fail("is not encrypted in an encrypted session");
    const { iv, ct, tag } = record;
    if (typeof iv !== "string" || typeof ct !== "string" || typeof tag !== "string") throw fail("has no iv, ct and tag");
    let plain: string;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64"), { authTagLength: 16 });
      decipher.setAAD(this.aad(ordinal));
      decipher.setAuthTag(Buffer.from(tag, "base64"));
      plain = Buffer.concat([decipher.update(Buffer.from(ct, "base64")), decipher.final()]).toString("utf8");
    } catch {
      throw fail("fails authentication (tampered, moved, or another key)");
    }
    return plain;
  }

  private aad(ordinal: number): Buffer {
    return Buffer.from(`transcript-store/v1\n${this.sessionId}\n${ordinal}`);
  }
}

/**
 * The cipher for a session headed by `header` under `key`: null for a plain session;
 * `KEY_REQUIRED` when the header is encrypted and no key was given, `DECRYPT_FAILED` when the
 * given key is not the one the header names.
 */
export function cipherFor(header: SessionHeader, key: StoreKey | null): LineCipher | null {
  const encryption = headerEncryption(header);
  if (encryption === null) return null;
  if (key === null) {
    throw new TranscriptStoreError("KEY_REQUIRED", `Session ${header.id} is encrypted (key id ${encryption.keyId}); no key was given`);
  }
  if (key.keyId !== encryption.keyId) {
    throw new TranscriptStoreError(
      "DECRYPT_FAILED",
      `Session ${header.id} is encrypted under key id ${encryption.keyId}, not the given ${key.keyId}; nothing is read or written`,
    );
  }
  return new LineCipher(key, header.id);
}
