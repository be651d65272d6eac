import { BlobStore } from "../blob/blob-store.ts";
import { KeyedBlobs } from "../blob/keyed-blobs.ts";
import { keyedBlobRefsIn, toKeyedBlobRef } from "../blob/keyed-blob-ref.ts";
import { TranscriptStoreError } from "../errors.ts";
import { keyedBlobCipherOf } from "../crypto/keyed-lines.ts";
import type { StoreKey } from "../crypto/line-cipher.ts";

/**
 * The keyed blobs of a session being rekeyed, moved to the new key: every keyed ref its lines hold
 * is read and authenticated under the old key first (a missing or corrupt one: `BLOB_MISSING` /
 * `BLOB_CORRUPT`, nothing written); then each is stored under the new key (new names: nothing is
 * overwritten) and the lines' refs are renamed. The old blobs stay for gc (another session may
 * still reference them).
 */
export function rekeyBlobs(texts: string[], blobsDir: string | undefined, from: StoreKey, to: StoreKey, fsync: boolean): string[] {
  const hexes = new Set<string>();
  for (const text of texts) for (const hex of keyedBlobRefsIn(text)) hexes.add(hex);
  if (hexes.size === 0) return texts;
  if (blobsDir === undefined)
    throw new TranscriptStoreError("INVALID_OPTION", "This session references keyed blobs: rekey needs the store's blobsDir");
  const store = new BlobStore(blobsDir, { fsync });
  const old = new KeyedBlobs(store, keyedBlobCipherOf(from));
  const next = new KeyedBlobs(store, keyedBlobCipherOf(to));
  const read = (hex: string): Buffer => {
    const bytes = old.getSync(hex);
    if (bytes === null)
      throw new TranscriptStoreError("BLOB_MISSING", `Keyed blob ${hex} is missing: nothing is rekeyed`, { path: old.pathOf(hex) });
    return bytes;
  };
  // All are proven readable before anything is written (one image in memory at a time).
  for (const hex of hexes) read(hex);
  const renamed = new Map<string, string>();
  for (const hex of hexes) renamed.set(toKeyedBlobRef(hex), next.putSync(read(hex)).ref);
  return texts.map((text) => {
    let out = text;
    for (const [from, to] of renamed) if (out.includes(from)) out = out.split(from).join(to);
    return out;
  });
}
