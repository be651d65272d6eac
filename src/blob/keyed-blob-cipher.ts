import { createCipheriv, createDecipheriv, createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { TranscriptStoreError } from "../errors.ts";
import { toKeyedBlobRef } from "./keyed-blob-ref.ts";

/** First bytes of a keyed blob file: format and version (docs/format.md, Keyed blobs). */
export const KEYED_BLOB_MAGIC = Buffer.from("tskb1\n");
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HKDF_SALT = Buffer.from("transcript-store keyed blobs");

/** True when `bytes` has the form of a keyed blob file (magic, room for the tag): what can be told without the key. */
export function isKeyedBlobFile(bytes: Buffer): boolean {
  return bytes.length >= KEYED_BLOB_MAGIC.length + TAG_BYTES && bytes.subarray(0, KEYED_BLOB_MAGIC.length).equals(KEYED_BLOB_MAGIC);
}

/**
 * Keyed content addressing for one store key: the ref of some bytes is their HMAC-SHA256 under a
 * key derived (HKDF-SHA256) from the store key, and the file holds them AES-256-GCM-encrypted under
 * a second derived key, with the ref as associated data. The IV is the ref's first 12 bytes: the
 * same bytes always give the same file (deduplication within a store, an intact copy is recognised
 * byte for byte), and an IV repeats only with the very same plaintext, which reveals equality and
 * nothing more (the ref already does).
 */
export class KeyedBlobCipher {
  private readonly refKey: Buffer;
  private readonly contentKey: Buffer;

  constructor(storeKey: Uint8Array) {
    this.refKey = Buffer.from(hkdfSync("sha256", storeKey, HKDF_SALT, "transcript-store keyed blob refs v1", 32));
    this.contentKey = Buffer.from(hkdfSync("sha256", storeKey, HKDF_SALT, "transcript-store keyed blob content v1", 32));
  }

  /** The 64 hex digits of the keyed ref of `bytes`. */
  hexOf(bytes: Uint8Array): string {
    return createHmac("sha256", this.refKey).update(bytes).digest("hex");
  }

  /** The file content for `bytes` whose keyed hex is `hex` (`hexOf(bytes)`). */
  seal(hex: string, bytes: Uint8Array): Buffer {
    const cipher = createCipheriv("aes-256-gcm", this.contentKey, Buffer.from(hex, "hex").subarray(0, IV_BYTES));
    cipher.setAAD(Buffer.from(toKeyedBlobRef(hex)));
    const ct = Buffer.concat([cipher.update(bytes), cipher.final()]);
    return Buffer.concat([KEYED_BLOB_MAGIC, ct, cipher.getAuthTag()]);
  }

  /**
   * The bytes a keyed blob file holds, proven to be what the ref names: the tag must authenticate
   * (this key, this ref) and the plaintext must HMAC to the ref. Anything else is `BLOB_CORRUPT`
   * (tampered, truncated, swapped, or sealed under another key): nothing is served.
   */
  open(hex: string, sealed: Buffer, path?: string): Buffer {
    const fail = (why: string) =>
      new TranscriptStoreError("BLOB_CORRUPT", `Keyed blob ${hex} ${why}; nothing is served`, path === undefined ? {} : { path });
    if (!isKeyedBlobFile(sealed)) throw fail("is not a keyed blob file");
    let plain: Buffer;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.contentKey, Buffer.from(hex, "hex").subarray(0, IV_BYTES), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(Buffer.from(toKeyedBlobRef(hex)));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      plain = Buffer.concat([decipher.update(sealed.subarray(KEYED_BLOB_MAGIC.length, sealed.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw fail("fails authentication (tampered, or another key)");
    }
    if (!timingSafeEqual(Buffer.from(this.hexOf(plain), "hex"), Buffer.from(hex, "hex"))) throw fail("does not hold what its ref names");
    return plain;
  }
}
