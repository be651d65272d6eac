import type { Pool, PoolClient } from "./pg-client.ts";
import { parseBlobRef, blobHashOf } from "../../../blob/blob-ref.ts";
import { TranscriptStoreError } from "../../../errors.ts";
import { readBlobs, writeBlobs } from "./blob-transfer.ts";
import { checkBlobSize, type PgLimits } from "./limits.ts";
import { isForeignKeyViolation } from "./pg-errors.ts";
import { withClient, withTransaction } from "./transaction.ts";
import type { PgBlobWrite } from "./types.ts";

/** The hashes of `writes`, each checked against its bytes (`BLOB_CORRUPT` when they differ) and its size (limits.ts). */
function checkedWrites(writes: readonly PgBlobWrite[], limits: PgLimits): Map<string, Uint8Array> {
  const byHash = new Map<string, Uint8Array>();
  for (const write of writes) {
    const hash = parseBlobRef(write.sha256);
    checkBlobSize(write.bytes.byteLength, limits);
    if (blobHashOf(write.bytes) !== hash) {
      throw new TranscriptStoreError("BLOB_CORRUPT", `Blob bytes do not hash to ${hash}`);
    }
    byHash.set(hash, write.bytes);
  }
  return byHash;
}

function insertBlobs(client: PoolClient, byHash: Map<string, Uint8Array>, hashes: readonly string[], limits: PgLimits): Promise<void> {
  return writeBlobs(
    client,
    hashes.map((hash) => ({ hash, bytes: byHash.get(hash)! })),
    limits,
  );
}

/**
 * Inside the caller's transaction: stores `writes` and takes a KEY SHARE lock on the row of every
 * blob in `refs` (and `writes`), so that, until the transaction ends, gc cannot delete them (its
 * `FOR UPDATE SKIP LOCKED` passes them by) and the refs inserted next always find their rows. A
 * blob gc deleted between the insert and the lock (the lock then finds no row) is inserted again
 * from the batch's bytes; a referenced blob neither stored nor in the batch is `BLOB_MISSING`.
 * Returns the sorted hashes locked.
 */
export async function storeAndLockBlobs(
  client: PoolClient,
  writes: readonly PgBlobWrite[],
  refs: Iterable<string>,
  limits: PgLimits,
): Promise<string[]> {
  const byHash = checkedWrites(writes, limits);
  const wanted = new Set(byHash.keys());
  for (const ref of refs) wanted.add(parseBlobRef(ref));
  const hashes = [...wanted].sort();
  await insertBlobs(client, byHash, [...byHash.keys()].sort(), limits);
  let unlocked = hashes;
  for (let round = 0; unlocked.length > 0; round++) {
    if (round > 0) {
      const absent = unlocked.find((h) => !byHash.has(h));
      if (absent !== undefined) throw new TranscriptStoreError("BLOB_MISSING", `Blob ${absent} is referenced but not stored`);
      if (round > 5) throw new TranscriptStoreError("PERSISTENCE_FAILED", "Blobs kept disappearing under a concurrent gc");
      await insertBlobs(client, byHash, unlocked, limits);
    }
    const { rows } = await client.query<{ sha256: string }>("SELECT sha256 FROM blobs WHERE sha256 = ANY($1) FOR KEY SHARE", [unlocked]);
    const locked = new Set(rows.map((r) => r.sha256));
    unlocked = unlocked.filter((h) => !locked.has(h));
  }
  return hashes;
}

/** Blob hashes as a `text[]` parameter, every one validated (`INVALID_BLOB_REF`). */
export function blobHashes(refs: Iterable<string>): string[] {
  return [...new Set([...refs].map(parseBlobRef))].sort();
}

/** Content-addressed blobs as rows (`blobs`: sha256 → bytes). Every method validates the hash (`INVALID_BLOB_REF`). */
export class PgBlobs {
  constructor(
    private readonly pool: Pool,
    private readonly limits: PgLimits,
  ) {}

  /**
   * Stores `bytes` under their sha256 (idempotent) and refreshes the blob's `touched` time, so gc's
   * grace period protects a blob put now and referenced by a later append. Returns the hash.
   */
  async put(bytes: Uint8Array): Promise<string> {
    return (await this.store(bytes)).hash;
  }

  /** `put`, telling whether the blob was stored already (one statement: an upsert that reports what it did). */
  async store(bytes: Uint8Array): Promise<{ hash: string; existed: boolean }> {
    const hash = blobHashOf(bytes);
    checkBlobSize(bytes.byteLength, this.limits);
    if (bytes.byteLength > this.limits.blobPartBytes) {
      return withTransaction(this.pool, "Storing a blob", async (client) => {
        const { rowCount } = await client.query("UPDATE blobs SET touched = now() WHERE sha256 = $1", [hash]);
        if (rowCount === 1) return { hash, existed: true };
        await writeBlobs(client, [{ hash, bytes }], this.limits);
        return { hash, existed: false };
      });
    }
    const { rows } = await withClient(this.pool, "Storing a blob", (client) =>
      client.query<{ inserted: boolean }>(
        `INSERT INTO blobs (sha256, bytes, size) VALUES ($1, $2, $3)
         ON CONFLICT (sha256) DO UPDATE SET touched = now()
         RETURNING (xmax = 0) AS inserted`,
        [hash, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), bytes.byteLength],
      ),
    );
    return { hash, existed: rows[0]?.inserted === false };
  }

  /** The blob's bytes, or null when absent; `verify` re-hashes them (`BLOB_CORRUPT` on a mismatch). */
  async get(refOrHash: string, options: { verify?: boolean } = {}): Promise<Buffer | null> {
    const hash = parseBlobRef(refOrHash);
    const found = await withClient(this.pool, "Reading a blob", (client) => readBlobs(client, [hash], this.limits));
    const bytes = found.get(hash) ?? null;
    if (bytes !== null && options.verify && blobHashOf(bytes) !== hash) {
      throw new TranscriptStoreError("BLOB_CORRUPT", `Blob ${hash} does not hash to its name`);
    }
    return bytes;
  }

  /**
   * The bytes of the stored blobs among `hashes` (absent ones left out), unverified: the caller
   * hashes them. Large blobs are read in parts (limits.ts).
   */
  async getMany(hashes: Iterable<string>): Promise<Map<string, Buffer>> {
    const wanted = blobHashes(hashes);
    return withClient(this.pool, "Reading blobs", (client) => readBlobs(client, wanted, this.limits));
  }

  /** True when the blob is stored. */
  async has(refOrHash: string): Promise<boolean> {
    const hash = parseBlobRef(refOrHash);
    const { rows } = await withClient(this.pool, "Looking up a blob", (client) =>
      client.query("SELECT 1 FROM blobs WHERE sha256 = $1", [hash]),
    );
    return rows.length === 1;
  }

  /** Every stored hash, sorted. */
  async list(): Promise<string[]> {
    const { rows } = await withClient(this.pool, "Listing blobs", (client) =>
      client.query<{ sha256: string }>("SELECT sha256 FROM blobs ORDER BY sha256"),
    );
    return rows.map((r) => r.sha256);
  }

  /**
   * Deletes the blob unless a session references it (or a writer is referencing it right now:
   * its row is locked and skipped). Returns whether it was deleted.
   */
  async delete(refOrHash: string): Promise<boolean> {
    const hash = parseBlobRef(refOrHash);
    const attempt = withTransaction(this.pool, "Deleting a blob", async (client) => {
      const { rows } = await client.query(
        `DELETE FROM blobs b WHERE b.sha256 IN (SELECT sha256 FROM blobs WHERE sha256 = $1 FOR UPDATE SKIP LOCKED)
           AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.sha256 = b.sha256)
         RETURNING b.sha256`,
        [hash],
      );
      return rows.length === 1;
    });
    // a ref committed after the statement's snapshot: the foreign key refuses the delete, as it must
    return attempt.catch((err: unknown) => (isForeignKeyViolation(err) ? false : Promise.reject(err)));
  }
}
