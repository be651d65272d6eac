import { BLOB_REF_PREFIX, forEachBlobRef } from "../blob/blob-ref.ts";
import { BlobStore } from "../blob/blob-store.ts";
import { TranscriptStoreError, type ErrorCode, type StoreWarning } from "../errors.ts";
import { LineSplitter } from "../format/line-splitter.ts";
import { io } from "../io.ts";
import { rehydrateValue } from "../session/rehydrate.ts";
import { acquireSessionLock } from "../session/session-lock.ts";
import { writeSessionFileAtomic } from "../session/session-file.ts";

/**
 * The way back from the blob store to files pi itself reads (docs/pi.md, Images in a pi tree):
 * one session file rewritten in place with every image blob ref replaced by the image's base64
 * again. Every other line is copied byte for byte (malformed ones included); the file is taken
 * under the session lock, written to a temp file and renamed over the original only when every
 * ref resolved and the file did not change meanwhile. Nothing is deleted from the blob store.
 */

export interface InlineImagesReport {
  path: string;
  status: "inlined" | "unchanged" | "failed";
  /** Images put back inline. */
  images: number;
  /** For a failure: the error code (the file is as it was). */
  code?: ErrorCode;
  message?: string;
}

const CHUNK = 1 << 20;

const LF = Buffer.from("\n");

function countRefs(text: string): number {
  let count = 0;
  forEachBlobRef(text, () => count++);
  return count;
}

/** A line with its refs resolved, or null when it holds none that resolve (copied as it is). */
function inlineLine(bytes: Buffer, blobs: BlobStore): { text: string; images: number } | null {
  if (!bytes.includes(BLOB_REF_PREFIX)) return null;
  const text = bytes.toString("utf8");
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return null; // a malformed line is kept as it is
  }
  let failure: StoreWarning | null = null;
  const resolved = rehydrateValue(record, blobs, (w) => (failure ??= w));
  if (failure !== null) {
    const w: StoreWarning = failure;
    const code: ErrorCode = w.code === "BLOB_CORRUPT" || w.code === "INVALID_BLOB_REF" ? w.code : "BLOB_MISSING";
    throw new TranscriptStoreError(code, w.message);
  }
  if (resolved === record) return null;
  const out = JSON.stringify(resolved);
  return { text: out, images: countRefs(text) - countRefs(out) };
}

/** Rewrites one session file with its images inline (see the module comment). */
export async function inlineImagesInFile(path: string, blobsDir: string): Promise<InlineImagesReport> {
  let lock;
  try {
    lock = await acquireSessionLock(path, { onCompromised: () => {} });
  } catch (err) {
    return failed(path, err);
  }
  let fd: number | null = null;
  try {
    const before = io.statSync(path);
    const blobs = new BlobStore(blobsDir);
    fd = io.openSync(path, "r");
    const source = fd;
    let images = 0;
    try {
      // The session writer's atomic rewrite: temp file (the file's own mode) → fsync → rename.
      writeSessionFileAtomic(
        path,
        (emit) => {
          const splitter = new LineSplitter((line) => {
            const inlined = inlineLine(line.bytes, blobs);
            if (inlined !== null) images += inlined.images;
            emit(inlined !== null ? Buffer.from(inlined.text) : line.bytes);
            if (line.terminated) emit(LF);
          });
          const chunk = Buffer.allocUnsafe(CHUNK);
          for (let n = io.readSync(source, chunk, 0, CHUNK, null); n > 0; n = io.readSync(source, chunk, 0, CHUNK, null))
            splitter.push(chunk.subarray(0, n));
          splitter.end();
          if (images === 0) throw UNCHANGED;
        },
        {
          fsync: true,
          mode: before.mode & 0o777,
          beforeRename: () => {
            const after = io.statSync(path);
            if (after.size !== before.size || after.mtimeMs !== before.mtimeMs)
              throw new TranscriptStoreError(
                "PERSISTENCE_FAILED",
                `Session file changed while its images were inlined; left as it is: ${path}`,
              );
            lock.assertHeld();
          },
        },
      );
    } catch (err) {
      if (err === UNCHANGED) return { path, status: "unchanged", images: 0 };
      throw err;
    }
    return { path, status: "inlined", images };
  } catch (err) {
    return failed(path, err);
  } finally {
    if (fd !== null) io.closeSync(fd);
    await lock.release();
  }
}

/** Thrown out of the rewrite when no line held an image ref: the temp file is dropped, the file left alone. */
const UNCHANGED = Symbol("unchanged");

function failed(path: string, err: unknown): InlineImagesReport {
  if (err instanceof TranscriptStoreError) return { path, status: "failed", images: 0, code: err.code, message: err.message };
  return { path, status: "failed", images: 0, code: "PERSISTENCE_FAILED", message: (err as Error).message };
}
