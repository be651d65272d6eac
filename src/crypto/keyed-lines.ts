import { BLOB_REF_PREFIX, blobRefsIn, toBlobRef } from "../blob/blob-ref.ts";
import { KeyedBlobCipher } from "../blob/keyed-blob-cipher.ts";
import { isKeyedBlobRef, keyedBlobRefsIn, KEYED_BLOB_REF_PREFIX, toKeyedBlobRef } from "../blob/keyed-blob-ref.ts";
import type { KeyedBlobs } from "../blob/keyed-blobs.ts";
import { TranscriptStoreError, type StoreWarning } from "../errors.ts";
import { isRecord, type RawRecord } from "../format/types.ts";
import { mapImagePayloads } from "../prepare/image-shapes.ts";
import type { LineCipher, StoreKey } from "./line-cipher.ts";

/** The keyed-blob cipher of a store key (keys derived once per key). */
export function keyedBlobCipherOf(key: StoreKey): KeyedBlobCipher {
  let cipher = ciphers.get(key.key);
  if (cipher === undefined) {
    cipher = new KeyedBlobCipher(key.key);
    ciphers.set(key.key, cipher);
  }
  return cipher;
}
const ciphers = new WeakMap<Buffer, KeyedBlobCipher>();

/** Every blob ref (plain and keyed) a plain JSON line names, distinct, sorted: the clear list of its sealed form. */
function refsOf(plain: string): string[] {
  if (!plain.includes("blob:")) return [];
  const refs = new Set<string>();
  for (const hash of blobRefsIn(plain)) refs.add(toBlobRef(hash));
  for (const hex of keyedBlobRefsIn(plain)) refs.add(toKeyedBlobRef(hex));
  return [...refs].sort();
}

/**
 * The encrypted line for `plain` at `ordinal`. A line naming blobs lists their refs in clear
 * (`"blobs":[…]` before the ciphertext, docs/format.md): gc, du and verify find what an encrypted session references
 * without its key, and a reader checks the list against the decrypted line (`openLineChecked`).
 */
export function sealLine(cipher: LineCipher, plain: string, ordinal: number): string {
  const sealed = cipher.seal(plain, ordinal);
  const refs = refsOf(plain);
  if (refs.length === 0) return sealed;
  const list = `"blobs":${JSON.stringify(refs)}`;
  // Before the ciphertext: a torn line (its end lost) still names its blobs, so gc keeps them for its quarantine.
  return sealed.startsWith(SEALED_PREFIX)
    ? `${SEALED_PREFIX}${list},${sealed.slice(SEALED_PREFIX.length)}`
    : `${sealed.slice(0, -1)},${list}}`;
}
const SEALED_PREFIX = '{"type":"encrypted","v":1,';

/**
 * The plain JSON line an encrypted line holds, its clear blob list proven equal to the refs the
 * plaintext names: a list edited, dropped or added is `DECRYPT_FAILED` (the list is what gc keeps
 * blobs by, so a forged one must not be trusted silently).
 */
export function openLineText(cipher: LineCipher, record: RawRecord, ordinal: number): string {
  const text = cipher.openText(record, ordinal);
  const listed = record.blobs;
  const expected = refsOf(text);
  const same =
    listed === undefined
      ? expected.length === 0
      : Array.isArray(listed) && listed.length === expected.length && listed.every((ref, i) => ref === expected[i]);
  if (!same) {
    throw new TranscriptStoreError(
      "DECRYPT_FAILED",
      `Entry line ${ordinal}: its clear blob list does not match the refs it holds (tampered); nothing is served`,
    );
  }
  return text;
}

/** `openLineText` parsed: the record an encrypted line holds. */
export function openLineChecked(cipher: LineCipher, record: RawRecord, ordinal: number): RawRecord {
  const value: unknown = JSON.parse(openLineText(cipher, record, ordinal));
  if (!isRecord(value) || typeof value.type !== "string")
    throw new TranscriptStoreError("DECRYPT_FAILED", `Entry line ${ordinal} does not hold a record; nothing is served`);
  return value as RawRecord;
}

/** A keyed blob a line references: kept to put it back if a gc took it before the line landed. */
export interface KeyedWrite {
  hex: string;
  bytes: Uint8Array;
}

/**
 * An entry of an encrypted session with its image refs made keyed: every `blob:sha256:` image
 * payload whose bytes are at hand (`bytesOf`: the line's own externalized images, the store, a
 * fork's source) is stored as a keyed blob and named by its keyed ref; nothing reaches the store in
 * clear. A plain ref whose bytes cannot be found stays as it is (`BLOB_MISSING` warning).
 */
export function toKeyedEntry<T>(
  entry: T,
  keyed: KeyedBlobs,
  bytesOf: (hash: string) => Uint8Array | null,
  warn: (warning: StoreWarning) => void,
): { entry: T; written: KeyedWrite[] } {
  const written = new Map<string, KeyedWrite>();
  const byHash = new Map<string, string>();
  const mapped = mapImagePayloads(entry, (payload) => {
    if (!payload.startsWith(BLOB_REF_PREFIX) || isKeyedBlobRef(payload)) return payload;
    const hash = payload.slice(BLOB_REF_PREFIX.length);
    const known = byHash.get(hash);
    if (known !== undefined) return known;
    const bytes = bytesOf(hash);
    if (bytes === null) {
      warn({ code: "BLOB_MISSING", message: `Blob ${hash} is missing; its plain ref is kept in the encrypted line` });
      return payload;
    }
    const put = keyed.putSync(bytes);
    written.set(put.hex, { hex: put.hex, bytes });
    byHash.set(hash, put.ref);
    return put.ref;
  });
  return { entry: mapped, written: [...written.values()] };
}

/** True when a raw (encrypted) line lists a keyed blob in clear. */
export function mentionsKeyedRef(text: string): boolean {
  return text.includes(KEYED_BLOB_REF_PREFIX);
}
