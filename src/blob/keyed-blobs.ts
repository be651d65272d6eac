import type { BlobStore } from "./blob-store.ts";
import type { KeyedBlobCipher } from "./keyed-blob-cipher.ts";
import { parseKeyedBlobRef, toKeyedBlobRef } from "./keyed-blob-ref.ts";

/** A keyed blob stored: its ref and whether an intact copy was already there. */
export interface KeyedPut {
  hex: string;
  ref: string;
  existed: boolean;
}

/**
 * Keyed blobs in a blob store: `<blobsDir>/<hmac hex>` holding the sealed bytes. Writes go through
 * the store's own put (temp + rename, an intact copy proven byte for byte and its mtime refreshed
 * for gc's grace period, a damaged one replaced): sealing is deterministic, so the sealed bytes are
 * what the file must hold. Reads decrypt and check the HMAC (`KeyedBlobCipher.open`).
 */
export class KeyedBlobs {
  constructor(
    readonly store: BlobStore,
    readonly cipher: KeyedBlobCipher,
  ) {}

  /** Stores `bytes` as a keyed blob; idempotent. */
  putSync(bytes: Uint8Array): KeyedPut {
    const hex = this.cipher.hexOf(bytes);
    const put = this.store.putHashedSync(hex, this.cipher.seal(hex, bytes));
    return { hex, ref: toKeyedBlobRef(hex), existed: put.existed };
  }

  /** Stores bytes whose keyed hex the caller computed (`cipher.hexOf`) when absent or damaged. */
  ensureSync(hex: string, bytes: Uint8Array): void {
    this.store.putHashedSync(hex, this.cipher.seal(hex, bytes));
  }

  /** The bytes of a keyed blob, authenticated; null when absent; `BLOB_CORRUPT` when not what the ref names. */
  getSync(refOrHex: string): Buffer | null {
    const hex = parseKeyedBlobRef(refOrHex);
    const sealed = this.store.getSync(hex);
    return sealed === null ? null : this.cipher.open(hex, sealed, this.store.pathOf(hex));
  }

  /** Cheap presence check (no read, no decryption). */
  hasSync(refOrHex: string): boolean {
    return this.store.hasSync(parseKeyedBlobRef(refOrHex));
  }

  /** Where a keyed blob is stored. */
  pathOf(refOrHex: string): string {
    return this.store.pathOf(parseKeyedBlobRef(refOrHex));
  }
}
