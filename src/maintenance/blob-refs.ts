import { constants } from "node:fs";
import { forEachBlobRef } from "../blob/blob-ref.ts";
import { forEachKeyedBlobRef } from "../blob/keyed-blob-ref.ts";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { LineSplitter } from "../format/line-splitter.ts";
import { io } from "../io.ts";
import { DEFAULT_CHUNK_SIZE } from "../session/session-file-reader.ts";

/** Counts references with multiplicity (for dedup statistics). */
export class RefCounter {
  readonly counts = new Map<string, number>();
  add(hash: string): void {
    this.counts.set(hash, (this.counts.get(hash) ?? 0) + 1);
  }
}

/**
 * Every blob hash a file references, read raw line by line, so refs inside malformed lines,
 * quarantine records (also their base64 form) and backups count too. Keyed refs count by their
 * hex name (an encrypted line lists them in clear): no key is needed to keep what is referenced. Throws
 * `PERSISTENCE_FAILED` when the file cannot be read: a collector must never guess.
 */
export function blobRefsOfFile<T extends { add(hash: string): unknown }>(path: string, into: T): T {
  let fd: number;
  try {
    // Non-blocking: a FIFO put under the name since it was listed must not hang the reader.
    fd = io.openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return into;
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot read ${path}: ${(err as Error).message}`, { path, cause: err });
  }
  try {
    if (!io.fstatSync(fd).isFile()) {
      io.closeSync(fd);
      return into; // not a regular file (any more): it holds no session
    }
  } catch (err) {
    io.closeSync(fd);
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot read ${path}: ${(err as Error).message}`, { path, cause: err });
  }
  const quarantine = path.endsWith(".quarantine.jsonl");
  const visit = (hash: string) => into.add(hash);
  const splitter = new LineSplitter(({ bytes }) => {
    forEachBlobRef(bytes, visit);
    forEachKeyedBlobRef(bytes, visit);
    if (quarantine && bytes.includes('"base64":"')) {
      try {
        const record = JSON.parse(bytes.toString("utf8")) as { base64?: unknown };
        if (typeof record.base64 === "string") {
          const raw = Buffer.from(record.base64, "base64");
          forEachBlobRef(raw, visit);
          forEachKeyedBlobRef(raw, visit);
        }
      } catch {
        // a damaged quarantine line still had its raw refs collected above
      }
    }
  });
  const buf = Buffer.allocUnsafe(DEFAULT_CHUNK_SIZE);
  try {
    for (let n = io.readSync(fd, buf, 0, buf.length, null); n > 0; n = io.readSync(fd, buf, 0, buf.length, null))
      splitter.push(buf.subarray(0, n));
    splitter.end();
  } catch (err) {
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot read ${path}: ${(err as Error).message}`, { path, cause: err });
  } finally {
    io.closeSync(fd);
  }
  return into;
}
