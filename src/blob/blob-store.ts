import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { join } from "node:path";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { ensureDir, io, writeFileAtomic } from "../io.ts";
import { isBlobHash, parseBlobRef, toBlobRef } from "./blob-ref.ts";

export interface BlobStoreOptions {
  /** fsync each new blob and its directory (survives power loss). @default false */
  fsync?: boolean;
}

export interface PutResult {
  hash: string;
  ref: string;
  path: string;
  /** True when the blob was already stored (its mtime was refreshed instead). */
  existed: boolean;
}

export interface GetOptions {
  /** Re-hash the bytes and throw `BLOB_CORRUPT` on mismatch. */
  verify?: boolean;
}

const TEMP_SUFFIX = ".tmp";

/** Reads a blob without following a symlink planted under its name (that is corruption, not data). */
function readNoFollow(path: string): Buffer | null {
  let fd: number;
  try {
    fd = io.openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT") return null;
    if (code === "ELOOP") throw new TranscriptStoreError("BLOB_CORRUPT", "Blob path is a symlink; refusing to follow it", { path, cause: err });
    throw err;
  }
  try {
    const size = io.fstatSync(fd).size;
    const bytes = Buffer.allocUnsafe(size);
    let off = 0;
    while (off < size) {
      const n = io.readSync(fd, bytes, off, size - off, off);
      if (n === 0) break;
      off += n;
    }
    return off === size ? bytes : bytes.subarray(0, off);
  } finally {
    io.closeSync(fd);
  }
}

/** True for a name in the blob directory that is an in-flight temp file. */
export function isBlobTempName(name: string): boolean {
  return name.startsWith(".") && name.endsWith(TEMP_SUFFIX);
}

/**
 * Global content-addressed store: `<dir>/<sha256 hex>`. Blobs are written to a temp file in the
 * same directory and renamed into place, so a reader never sees a partial blob and a crash leaves
 * at most an orphan temp file.
 */
export class BlobStore {
  readonly dir: string;
  private readonly fsync: boolean;
  private dirReady = false;

  constructor(dir: string, options: BlobStoreOptions = {}) {
    if (typeof dir !== "string" || dir.length === 0) throw new TranscriptStoreError("INVALID_OPTION", "BlobStore needs a directory path");
    this.dir = dir;
    this.fsync = options.fsync === true;
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
    const hash = createHash("sha256").update(bytes).digest("hex");
    return this.putHashedSync(hash, bytes);
  }

  /**
   * Stores bytes whose sha256 the caller has just computed from these very bytes (the prepare
   * pipeline hashes while it externalizes; hashing twice on the hot path would be waste).
   * @internal
   */
  putHashedSync(hash: string, bytes: Uint8Array): PutResult {
    const path = join(this.dir, hash);
    const ref = toBlobRef(hash);
    if (this.touchExisting(path)) return { hash, ref, path, existed: true };
    this.ensureDir();
    try {
      writeFileAtomic(path, (emit) => emit(bytes), { fsync: this.fsync });
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not store blob ${hash}: ${(err as Error).message}`, { path, cause: err });
    }
    return { hash, ref, path, existed: false };
  }

  /**
   * Re-hashes the stored copy of `hash` and, when it does not match, replaces it with `bytes`
   * (whose sha256 the caller computed): a corrupt blob is healed by anyone who holds the original.
   * Returns true when it had to repair.
   */
  repairSync(hash: string, bytes: Uint8Array): boolean {
    const path = join(this.dir, hash);
    let intact: boolean;
    try {
      intact = this.getSync(hash, { verify: true }) !== null;
    } catch (err) {
      if (!(err instanceof TranscriptStoreError) || err.code !== "BLOB_CORRUPT") throw err;
      intact = false;
    }
    if (intact) return false;
    try {
      if (io.lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) io.unlinkSync(path);
      writeFileAtomic(path, (emit) => emit(bytes), { fsync: this.fsync });
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not repair blob ${hash}: ${(err as Error).message}`, { path, cause: err });
    }
    return true;
  }

  /** Refreshes an existing blob's mtime so a concurrent GC's grace period protects it. */
  private touchExisting(path: string): boolean {
    try {
      // The common case is a new blob: ask without paying for an ENOENT exception.
      const stat = io.lstatSync(path, { throwIfNoEntry: false });
      if (stat === undefined) return false;
      if (stat.isSymbolicLink()) {
        // A planted symlink is never a blob: replace it with the real bytes.
        io.unlinkSync(path);
        return false;
      }
      const now = new Date();
      io.utimesSync(path, now, now);
      return true;
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return false;
      // Cannot touch (read-only store?) but it exists: still usable.
      if (io.existsSync(path)) return true;
      return false;
    }
  }

  private ensureDir(): void {
    if (this.dirReady) return;
    try {
      ensureDir(this.dir);
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not create blob directory: ${(err as Error).message}`, { path: this.dir, cause: err });
    }
    this.dirReady = true;
  }

  async get(hashOrRef: string, options: GetOptions = {}): Promise<Buffer | null> {
    return this.getSync(hashOrRef, options);
  }

  getSync(hashOrRef: string, options: GetOptions = {}): Buffer | null {
    const path = this.pathOf(hashOrRef);
    const bytes = readNoFollow(path);
    if (bytes !== null && options.verify) this.check(path, bytes);
    return bytes;
  }

  private check(path: string, bytes: Buffer): void {
    const expected = path.slice(path.length - 64);
    const actual = createHash("sha256").update(bytes).digest("hex");
    if (actual !== expected) throw new TranscriptStoreError("BLOB_CORRUPT", `Blob ${expected} is corrupt (its bytes hash to ${actual})`, { path });
  }

  async has(hashOrRef: string): Promise<boolean> {
    return io.existsSync(this.pathOf(hashOrRef));
  }

  hasSync(hashOrRef: string): boolean {
    return io.existsSync(this.pathOf(hashOrRef));
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
