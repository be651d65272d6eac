import type { Stats } from "node:fs";
import { blobRefsIn, toBlobRef } from "../blob/blob-ref.ts";
import type { BlobStore } from "../blob/blob-store.ts";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { hashOpenFile, io } from "../io.ts";
import { DEFAULT_CHUNK_SIZE, scanSessionFile } from "../session/session-file-reader.ts";

/** sha256 of a file's bytes, streamed. */
export function hashFile(path: string): string | null {
  try {
    const fd = io.openSync(path, "r");
    try {
      return hashOpenFile(fd, DEFAULT_CHUNK_SIZE);
    } finally {
      io.closeSync(fd);
    }
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw err;
  }
}

/** Throws when `path` is no longer the file of `before`, or was written to since it was scanned. */
export function assertUnchanged(path: string, before: Stats, bytesScanned: number): void {
  const now = io.statSync(path);
  if (now.ino !== before.ino || now.size !== bytesScanned || now.mtimeMs !== before.mtimeMs) {
    throw new TranscriptStoreError("PERSISTENCE_FAILED", "The file was written to while it was migrated; it is left as it is", { path });
  }
}

/**
 * Pass 3: the bytes on disk are the bytes written, every line parses, and every referenced blob is
 * right. Blobs this run wrote (hashed from the very bytes, temp + rename) or re-hashed while
 * writing are checked by presence and size; any other referenced blob is read back and re-hashed.
 */
export function verifyWritten(
  temp: string,
  digest: string,
  entries: number,
  blobs: BlobStore,
  fresh: ReadonlyMap<string, number>,
  chunkSize: number,
): void {
  if (hashFile(temp) !== digest)
    throw new TranscriptStoreError("PERSISTENCE_FAILED", "Written file does not read back identically", { path: temp });
  const checked = new Set<string>();
  const parsed = scanSessionFile(
    temp,
    {
      mapRecord: (_record, text) => {
        for (const hash of blobRefsIn(text)) {
          const ref = toBlobRef(hash);
          if (checked.has(ref)) continue;
          checked.add(ref);
          const path = blobs.pathOf(ref);
          const size = fresh.get(hash);
          if (size !== undefined) {
            const stat = io.lstatSync(path, { throwIfNoEntry: false });
            if (stat === undefined || !stat.isFile() || stat.size !== size)
              throw new TranscriptStoreError("BLOB_MISSING", `Blob ${ref} missing or short after write`, { path });
          } else if (blobs.getSync(ref, { verify: true }) === null) {
            throw new TranscriptStoreError("BLOB_MISSING", `Blob ${ref} missing after write`, { path });
          }
        }
        return {};
      },
    },
    chunkSize,
  );
  if (
    parsed === null ||
    parsed.header === null ||
    parsed.malformed.length > 0 ||
    parsed.repaired.length > 0 ||
    parsed.tornTail !== null ||
    parsed.records.length !== entries
  ) {
    throw new TranscriptStoreError("PERSISTENCE_FAILED", "Written file does not verify", { path: temp });
  }
}
