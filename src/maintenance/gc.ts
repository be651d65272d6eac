import { join } from "node:path";
import fg from "fast-glob";
import { BlobStore, isBlobTempName } from "../blob/blob-store.ts";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { io } from "../io.ts";
import { blobRefsOfFile } from "./blob-refs.ts";

/** Blobs younger than this are never collected (a writer may not have appended its line yet). @default 1 h */
export const DEFAULT_GC_GRACE_MS = 60 * 60 * 1000;

export interface GcOptions {
  /** Every sessions root whose files may reference the blob store. */
  sessionRoots: string[];
  blobsDir: string;
  graceMs?: number;
  dryRun?: boolean;
  now?: () => number;
}

export interface GcReport {
  filesScanned: number;
  referenced: number;
  blobs: number;
  deleted: string[];
  /** Unreferenced but younger than the grace period. */
  keptYoung: number;
  bytesFreed: number;
  tempFilesRemoved: number;
  dryRun: boolean;
}

/**
 * Mark and sweep over the blob store: marks every ref in every session, quarantine and backup
 * file under the roots (raw bytes, so damaged lines count), then deletes unreferenced blobs older
 * than the grace period. If any file cannot be read it throws before deleting anything.
 */
export async function collectGarbage(options: GcOptions): Promise<GcReport> {
  const graceMs = options.graceMs ?? DEFAULT_GC_GRACE_MS;
  if (!(graceMs >= 0)) throw new TranscriptStoreError("INVALID_OPTION", "graceMs must be >= 0");
  const now = options.now ?? Date.now;
  const cutoff = now() - graceMs;
  const store = new BlobStore(options.blobsDir);
  // List blobs before marking: a blob written after this listing is not a candidate at all.
  const candidates: Array<{ hash: string; mtimeMs: number; size: number }> = [];
  for await (const hash of store.list()) {
    try {
      const stat = io.statSync(join(options.blobsDir, hash));
      candidates.push({ hash, mtimeMs: stat.mtimeMs, size: stat.size });
    } catch (err) {
      if (errnoCode(err) !== "ENOENT") throw err;
    }
  }
  const referenced = new Set<string>();
  let filesScanned = 0;
  for (const root of options.sessionRoots) {
    const files = await fg(["**/*.jsonl", "**/*.jsonl.bak", "**/*.bak"], { cwd: root, absolute: true, dot: false, followSymbolicLinks: false, suppressErrors: false, onlyFiles: true }).catch((err: unknown) => {
      if (errnoCode(err) === "ENOENT") return [] as string[];
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot scan ${root}: ${(err as Error).message}`, { path: root, cause: err });
    });
    for (const file of files) {
      blobRefsOfFile(file, referenced);
      filesScanned++;
    }
  }
  const report: GcReport = { filesScanned, referenced: referenced.size, blobs: candidates.length, deleted: [], keptYoung: 0, bytesFreed: 0, tempFilesRemoved: 0, dryRun: options.dryRun === true };
  for (const blob of candidates) {
    if (referenced.has(blob.hash)) continue;
    // Re-check the age: a concurrent put refreshes the mtime of a blob it reuses.
    let mtimeMs = blob.mtimeMs;
    try {
      mtimeMs = io.statSync(join(options.blobsDir, blob.hash)).mtimeMs;
    } catch {
      continue;
    }
    if (mtimeMs > cutoff) {
      report.keptYoung++;
      continue;
    }
    report.deleted.push(blob.hash);
    report.bytesFreed += blob.size;
    if (!report.dryRun) await store.delete(blob.hash);
  }
  try {
    for (const name of io.readdirSync(options.blobsDir)) {
      if (!isBlobTempName(name)) continue;
      const path = join(options.blobsDir, name);
      if (io.statSync(path).mtimeMs > cutoff) continue;
      report.tempFilesRemoved++;
      if (!report.dryRun) io.rmSync(path, { force: true });
    }
  } catch (err) {
    if (errnoCode(err) !== "ENOENT") throw err;
  }
  return report;
}
