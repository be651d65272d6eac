import { TranscriptStoreError } from "../errors.ts";
import { isRecord } from "../format/types.ts";
import { ENCRYPTION_SCHEME, headerEncryption, keyIdOf, type HeaderEncryption, type StoreKey } from "../crypto/line-cipher.ts";
import { readSessionHeader } from "./session-file-reader.ts";

/** `encryption` of SessionManagerOptions: a 32-byte key, or a callback that returns the key of a key id (a KMS). */
export interface EncryptionOptions {
  /** The store key: 32 bytes (AES-256). */
  key?: Uint8Array;
  /** The id recorded in new sessions' headers. @default derived from `key`; required with `keyProvider` */
  keyId?: string;
  /** Returns the 32-byte key of a key id (the one a session's header names, or `keyId` for a new session). */
  keyProvider?: (keyId: string) => Promise<Uint8Array> | Uint8Array;
  /**
   * Refuse a plain session (`NOT_ENCRYPTED`) instead of serving it with a `PLAIN_SESSION` warning:
   * a plain file put in place of an encrypted one is never read as the session. @default false
   */
  require?: boolean;
}

/** Validated encryption options; `key` is null until a provider gave it. */
export interface ResolvedEncryption {
  key: StoreKey | null;
  keyId: string | null;
  keyProvider: ((keyId: string) => Promise<Uint8Array> | Uint8Array) | null;
  require: boolean;
}

function storeKey(value: unknown, keyId: string | null, from: string): StoreKey {
  if (!(value instanceof Uint8Array) || value.length !== 32)
    throw new TranscriptStoreError("INVALID_OPTION", `${from} must be 32 bytes (a Uint8Array or Buffer)`);
  const key = Buffer.from(value);
  return { key, keyId: keyId ?? keyIdOf(key) };
}

/** Validates `encryption` (null: none). */
export function resolveEncryption(value: unknown): ResolvedEncryption | null {
  if (value === undefined) return null;
  if (!isRecord(value))
    throw new TranscriptStoreError("INVALID_OPTION", "encryption must be an object ({ key } or { keyProvider, keyId })");
  const { key, keyId, keyProvider, require } = value;
  if (require !== undefined && typeof require !== "boolean")
    throw new TranscriptStoreError("INVALID_OPTION", "encryption.require must be a boolean");
  if (keyId !== undefined && (typeof keyId !== "string" || !/^[\w.:-]{1,128}$/.test(keyId)))
    throw new TranscriptStoreError("INVALID_OPTION", "encryption.keyId must be 1-128 characters of [A-Za-z0-9_.:-]");
  if ((key === undefined) === (keyProvider === undefined))
    throw new TranscriptStoreError("INVALID_OPTION", "encryption needs exactly one of key and keyProvider");
  if (keyProvider !== undefined && typeof keyProvider !== "function")
    throw new TranscriptStoreError("INVALID_OPTION", "encryption.keyProvider must be a function");
  return {
    key: key === undefined ? null : storeKey(key, (keyId as string | undefined) ?? null, "encryption.key"),
    keyId: (keyId as string | undefined) ?? null,
    keyProvider: (keyProvider as ResolvedEncryption["keyProvider"]) ?? null,
    require: require === true,
  };
}

/** What a new session's header records. */
export function newHeaderEncryption(encryption: ResolvedEncryption): HeaderEncryption {
  const keyId = encryption.key?.keyId ?? encryption.keyId;
  if (keyId === null) throw new TranscriptStoreError("INVALID_OPTION", "encryption.keyId is required with keyProvider");
  return { scheme: ENCRYPTION_SCHEME, keyId };
}

/**
 * The encryption with its key in hand: a given key as is; from the provider, the key of `keyId` (a new
 * session's) or of the id the header of the session file at `path` names (none when it is plain or absent).
 */
export async function withProvidedKey(
  encryption: ResolvedEncryption | null,
  target: { keyId: string } | { path: string },
): Promise<ResolvedEncryption | null> {
  if (encryption === null || encryption.key !== null || encryption.keyProvider === null) return encryption;
  let keyId: string | null;
  if ("keyId" in target) keyId = target.keyId;
  else {
    const header = readHeaderQuietly(target.path);
    keyId = header === null ? null : (headerEncryption(header)?.keyId ?? null);
  }
  if (keyId === null) return encryption;
  let provided: unknown;
  try {
    provided = await encryption.keyProvider(keyId);
  } catch (err) {
    throw new TranscriptStoreError("KEY_REQUIRED", `encryption.keyProvider gave no key for key id ${keyId}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (provided === undefined || provided === null)
    throw new TranscriptStoreError("KEY_REQUIRED", `encryption.keyProvider gave no key for key id ${keyId}`);
  return { ...encryption, key: storeKey(provided, keyId, "the key encryption.keyProvider returned") };
}

function readHeaderQuietly(path: string) {
  try {
    return readSessionHeader(path);
  } catch {
    return null; // the open reports what is wrong with the file
  }
}
