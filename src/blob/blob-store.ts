import { join } from "node:path";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { createHash } from "node:crypto";
import { ensureDir, fsyncDir, io, removeQuietly, tempPathFor, writeFileAtomic, writeTempFileFrom } from "../io.ts";
import { openWithRelief } from "../session/append-handles.ts";
import { fileHoldsBytes, readBlobFile, settledMtime, stampOf } from "./blob-file.ts";
import { isBlobHash, parseBlobRef, toBlobRef, blobHashOf } from "./blob-ref.ts";
import { ProofLog } from "./proof-log.ts";

export interface BlobStoreOptions {
  /** fsync each new blob and its directory (survives power loss). @default false */
  fsync?: boolean;
  /**
   * A store of a read-only open: it uses the proof log (`.proven`) but never writes it, so a
   * `readOnly` open writes nothing, anywhere. @default false
   */
  readOnly?: boolean;
}

export interface PutResult {
  hash: string;
  ref: string;
  path: string;
  /** True when an intact copy was already stored (its mtime was refreshed instead of writing). */
  existed: boolean;
  /**
   * True when something else stood under the name (wrong size, wrong bytes, a symlink: a crash or
   * a foreign in-place writer) and was replaced by these bytes.
   */
  repaired: boolean;
}

export interface GetOptions {
  /** Re-hash the bytes and throw `BLOB_CORRUPT` on mismatch. */
  verify?: boolean;
}

/** sha256 of no bytes: the one name under which an empty file is a correct blob. */
const EMPTY_SHA256 = blobHashOf(new Uint8Array(0));

/** Sets a temp blob's mtime to the settled past before it is renamed into place. */
function settle(temp: string): void {
  const settled = settledMtime();
  io.utimesSync(temp, settled, settled);
}

/** Proven blobs remembered per store; beyond this the memory is dropped and proofs start over. */
const MAX_PROVEN = 65_536;

/**
 * Global content-addressed store: `<dir>/<sha256 hex>`. Blobs are written to a temp file in the
 * same directory and renamed into place, so a reader never sees a partial blob and a crash leaves
 * at most an orphan temp file.
 */
export class BlobStore {
  readonly dir: string;
  private readonly fsync: boolean;
  private dirReady = false;
  /**
   * hash → stamp of the file last proven (compared or re-hashed) to hold exactly that blob; loaded
   * from the directory's proof log on first use, so proofs outlive the process that made them.
   */
  private provenMap: Map<string, string> | null = null;
  private readonly proofLog: ProofLog;

  constructor(dir: string, options: BlobStoreOptions = {}) {
    if (typeof dir !== "string" || dir.length === 0) throw new TranscriptStoreError("INVALID_OPTION", "BlobStore needs a directory path");
    this.dir = dir;
    this.fsync = options.fsync === true;
    this.proofLog = new ProofLog(dir, options.readOnly !== true);
  }

  private get proven(): Map<string, string> {
    if (this.provenMap === null) this.provenMap = this.proofLog.load(MAX_PROVEN - 1);
    return this.provenMap;
  }

  /** The path a hash is stored at (the hash is validated first). */
  pathOf(hashOrRef: string): string {
    return join(this.dir, parseBlobRef(hashOrRef));
  }

  /** Stores bytes; idempotent. */
  async put(bytes: Uint8Array): Promise<PutResult> {
    return this.putSync(bytes);
  }

  putSync(bytes: Uint8Array): PutResult {
    const hash = blobHashOf(bytes);
    return this.putHashedSync(hash, bytes);
  }

  /**
   * Stores bytes whose sha256 the caller has just computed from these very bytes (the prepare
   * pipeline hashes while it externalizes; hashing twice on the hot path would be waste).
   *
   * A file already under the name is trusted only once it is proven to hold these bytes: a wrong
   * size (zero-length, truncated) is seen from its `lstat` alone; when the size matches, its
   * bytes are compared with these (cheaper than re-hashing, and no weaker) unless this store
   * already proved this very file (same inode, size and mtime). So each blob is read back at most
   * once per store instance, and a damaged one is healed by anyone who holds the original: the
   * right bytes go to a temp file renamed over it.
   * @internal
   */
  putHashedSync(hash: string, bytes: Uint8Array): PutResult {
    const path = join(this.dir, hash);
    const ref = toBlobRef(hash);
    const state = this.inspectExisting(path, hash, bytes);
    if (state === "intact") return { hash, ref, path, existed: true, repaired: false };
    this.ensureDir();
    try {
      // rename replaces whatever stands under the name (a damaged file, a planted symlink) atomically
      // Out of descriptors: idle session append descriptors are given back first.
      // Its mtime is set back past the racy window before it gets the name (see settledMtime), so
      // the proof recorded below is one any later process may trust from its first read on.
      openWithRelief(() => writeFileAtomic(path, bytes, { fsync: this.fsync, beforeRename: (temp) => settle(temp) }));
    } catch (err) {
      const what = state === "damaged" ? "repair" : "store";
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not ${what} blob ${hash}: ${(err as Error).message}`, {
        path,
        cause: err,
      });
    }
    this.rememberProven(hash, path);
    return { hash, ref, path, existed: false, repaired: state === "damaged" };
  }

  /**
   * Stores a blob whose bytes arrive in pieces (another store's, a bundle's) under `hash`, a piece
   * at a time: written to a temp file while hashed and renamed into place only when its sha256 is
   * `hash` (else `BLOB_CORRUPT`, nothing stored). A blob already present (`hasSync`) is left alone.
   * @internal
   */
  async putHashedFrom(hash: string, pieces: AsyncIterable<Uint8Array>): Promise<void> {
    const path = join(this.dir, parseBlobRef(hash));
    if (this.hasSync(hash)) return;
    this.ensureDir();
    const temp = tempPathFor(path);
    const hasher = createHash("sha256");
    try {
      await writeTempFileFrom(temp, pieces, this.fsync, (data) => hasher.update(data));
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not store blob ${hash}: ${(err as Error).message}`, { path, cause: err });
    }
    if (hasher.digest("hex") !== hash) {
      removeQuietly(temp);
      throw new TranscriptStoreError("BLOB_CORRUPT", `Blob ${hash} was given other bytes (their sha256 differs); not stored`, { path });
    }
    try {
      settle(temp);
      io.renameSync(temp, path);
    } catch (err) {
      removeQuietly(temp);
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not store blob ${hash}: ${(err as Error).message}`, { path, cause: err });
    }
    if (this.fsync) fsyncDir(this.dir);
    this.rememberProven(hash, path);
  }

  /**
   * Replaces the stored copy of `hash` with `bytes` (whose sha256 the caller computed) when it is
   * absent or damaged. Returns true when it had to repair.
   */
  repairSync(hash: string, bytes: Uint8Array): boolean {
    return this.putHashedSync(hash, bytes).repaired;
  }

  /**
   * What stands under a blob's name, checked against the bytes it must hold. An intact blob's
   * mtime is refreshed so a concurrent GC's grace period protects it.
   */
  private inspectExisting(path: string, hash: string, bytes: Uint8Array): "absent" | "intact" | "damaged" {
    let stat;
    try {
      // The common case is a new blob: ask without paying for an ENOENT exception.
      stat = io.lstatSync(path, { throwIfNoEntry: false });
    } catch {
      return "damaged"; // cannot even look: try to write the right bytes over it
    }
    if (stat === undefined) return "absent";
    if (!stat.isFile() || stat.size !== bytes.byteLength) return "damaged";
    if (this.proven.get(hash) !== stampOf(stat) && !fileHoldsBytes(path, bytes)) return "damaged";
    try {
      // The current time (not a settled one): this file was proven by a compare that a foreign
      // in-place write could follow before this call, so its new stamp is kept in memory only.
      const now = new Date();
      io.utimesSync(path, now, now);
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return "absent"; // collected meanwhile: store it again
      // Cannot touch (read-only store?): the bytes were proven right, so it is still usable.
    }
    this.rememberProven(hash, path);
    return "intact";
  }

  /** Records that the file now under `hash` holds the right bytes (keyed by its current stamp). */
  private rememberProven(hash: string, path: string, stamp?: string): void {
    let current = stamp;
    if (current === undefined) {
      let stat;
      try {
        stat = io.lstatSync(path, { throwIfNoEntry: false });
      } catch {
        return; // only a shortcut is lost: the next put or read proves it again
      }
      if (stat === undefined) return;
      current = stampOf(stat);
    }
    const proven = this.proven;
    if (proven.get(hash) === current) return;
    if (proven.size >= MAX_PROVEN) proven.clear();
    proven.set(hash, current);
    this.proofLog.record(hash, current, proven);
  }

  private ensureDir(): void {
    if (this.dirReady) return;
    try {
      ensureDir(this.dir, this.fsync);
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not create blob directory: ${(err as Error).message}`, {
        path: this.dir,
        cause: err,
      });
    }
    this.dirReady = true;
  }

  async get(hashOrRef: string, options: GetOptions = {}): Promise<Buffer | null> {
    return this.getSync(hashOrRef, options);
  }

  getSync(hashOrRef: string, options: GetOptions = {}): Buffer | null {
    const path = this.pathOf(hashOrRef);
    // `verify` hashes each chunk as it is read (one pass), like an unproven getVerifiedSync.
    const read = readBlobFile(path, options.verify === true ? () => true : undefined);
    if (read === null) return null;
    if (read.sha256 !== null) this.checkHashed(path, read.bytes, read.stamp, read.sha256);
    return read.bytes;
  }

  /**
   * The bytes of a blob, guaranteed to hash to its name (else `BLOB_CORRUPT`); null when absent.
   * The sha256 is computed only when neither this store nor the directory's proof log (`.proven`,
   * written by earlier stores) has proven this very file (same inode, size and mtime), so an image
   * is hashed once, not on every turn or every open, while a blob truncated or rewritten in place
   * since is caught on its next read. Bit rot under an unchanged stamp is `verify`'s to find.
   */
  getVerifiedSync(hashOrRef: string): Buffer | null {
    const path = this.pathOf(hashOrRef);
    const expected = path.slice(path.length - 64);
    // One pass: an unproven blob is hashed a chunk at a time as it is read, while the chunk is hot.
    const read = readBlobFile(path, (stamp) => this.proven.get(expected) !== stamp);
    if (read === null) return null;
    if (read.sha256 !== null) this.checkHashed(path, read.bytes, read.stamp, read.sha256);
    return read.bytes;
  }

  /** `actual` is the sha256 of `bytes`: BLOB_CORRUPT (and the proof revoked) unless it is the name. */
  private checkHashed(path: string, bytes: Buffer, stamp: string, actual: string): void {
    const expected = path.slice(path.length - 64);
    if (actual !== expected) {
      this.proven.delete(expected);
      this.proofLog.revoke(expected, this.proven); // bit rot under an unchanged stamp: no process trusts it again
      throw new TranscriptStoreError("BLOB_CORRUPT", `Blob ${expected} is corrupt (${bytes.length} bytes that hash to ${actual})`, {
        path,
      });
    }
    this.rememberProven(expected, path, stamp);
  }

  /**
   * Cheap presence check, no read: a regular file under the name (not a symlink or directory),
   * and not empty unless it is the empty blob. A truncated or rewritten blob still passes: use
   * `verify` (or `get(…, { verify: true })`) to re-hash.
   */
  async has(hashOrRef: string): Promise<boolean> {
    return this.hasSync(hashOrRef);
  }

  hasSync(hashOrRef: string): boolean {
    const hash = parseBlobRef(hashOrRef);
    let stat;
    try {
      stat = io.lstatSync(join(this.dir, hash), { throwIfNoEntry: false });
    } catch {
      return false;
    }
    return stat?.isFile() === true && (stat.size > 0 || hash === EMPTY_SHA256);
  }

  /** Re-hashes a stored blob: true when intact, false when corrupt or missing. */
  async verify(hashOrRef: string): Promise<boolean> {
    try {
      return (await this.get(hashOrRef, { verify: true })) !== null;
    } catch (err) {
      if (err instanceof TranscriptStoreError && err.code === "BLOB_CORRUPT") return false;
      throw err;
    }
  }

  /** Every stored hash (temp files and foreign names excluded). */
  async *list(): AsyncIterable<string> {
    let names: string[];
    try {
      names = io.readdirSync(this.dir);
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return;
      throw err;
    }
    for (const name of names) if (isBlobHash(name)) yield name;
  }

  /** Removes a blob (for GC). Returns false when it was already absent. */
  async delete(hashOrRef: string): Promise<boolean> {
    try {
      io.unlinkSync(this.pathOf(hashOrRef));
      return true;
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return false;
      throw err;
    }
  }
}
