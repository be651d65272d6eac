import { join } from "node:path";
import fg from "fast-glob";
import { BlobStore, isBlobTempName } from "../blob/blob-store.ts";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { io } from "../io.ts";
import { blobRefsOfFile } from "./blob-refs.ts";

/** Blobs younger than this are never collected (a writer may not have appended its line yet). @default 1 h */
export const DEFAULT_GC_GRACE_MS = 60 * 60 * 1000;

/** Temp files younger than this may belong to a writer still writing them. */
const TEMP_MIN_AGE_MS = 15 * 60 * 1000;

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
  restoreTrash(options.blobsDir);
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
  const markStarted = Date.now();
  const filesScanned = await markFiles(options.sessionRoots, referenced, 0);
  const report: GcReport = { filesScanned, referenced: referenced.size, blobs: candidates.length, deleted: [], keptYoung: 0, bytesFreed: 0, tempFilesRemoved: 0, dryRun: options.dryRun === true };
  // Sweep in two phases: move doomed blobs aside, re-mark the files that changed since marking
  // began (a writer may have referenced one meanwhile), put those back, then delete the rest.
  const trashed: Array<{ hash: string; trash: string; size: number }> = [];
  for (const blob of candidates) {
    if (referenced.has(blob.hash)) continue;
    const path = join(options.blobsDir, blob.hash);
    let mtimeMs: number;
    try {
      mtimeMs = io.statSync(path).mtimeMs; // a concurrent put refreshes a reused blob's mtime
    } catch {
      continue;
    }
    if (mtimeMs > cutoff) {
      report.keptYoung++;
      continue;
    }
    if (report.dryRun) {
      report.deleted.push(blob.hash);
      report.bytesFreed += blob.size;
      continue;
    }
    const trash = join(options.blobsDir, `.${blob.hash}.${process.pid}.gc.tmp`);
    try {
      io.renameSync(path, trash);
      trashed.push({ hash: blob.hash, trash, size: blob.size });
    } catch (err) {
      if (errnoCode(err) !== "ENOENT") throw err;
    }
  }
  if (trashed.length > 0) {
    const late = new Set<string>();
    await markFiles(options.sessionRoots, late, markStarted - 2000);
    for (const t of trashed) {
      const path = join(options.blobsDir, t.hash);
      try {
        if (late.has(t.hash) && !io.existsSync(path)) {
          io.renameSync(t.trash, path);
          continue;
        }
        io.rmSync(t.trash, { force: true });
      } catch (err) {
        if (errnoCode(err) !== "ENOENT") throw err; // another gc restored it meanwhile
        continue;
      }
      if (late.has(t.hash)) continue;
      report.deleted.push(t.hash);
      report.bytesFreed += t.size;
    }
  }
  try {
    for (const name of io.readdirSync(options.blobsDir)) {
      if (!isBlobTempName(name) || name.endsWith(`.${process.pid}.gc.tmp`)) continue;
      const path = join(options.blobsDir, name);
      // In-flight temp files of live writers are young: only long-abandoned ones go.
      if (io.statSync(path).mtimeMs > Math.min(cutoff, now() - TEMP_MIN_AGE_MS)) continue;
      report.tempFilesRemoved++;
      if (!report.dryRun) io.rmSync(path, { force: true });
    }
  } catch (err) {
    if (errnoCode(err) !== "ENOENT") throw err;
  }
  return report;
}

/** Marks the refs of every session, quarantine and backup file under the roots modified at or after `sinceMs`. */
async function markFiles(roots: readonly string[], into: Set<string>, sinceMs: number): Promise<number> {
  let scanned = 0;
  for (const root of roots) {
    const files = await fg(["**/*.jsonl", "**/*.bak"], { cwd: root, absolute: true, dot: false, followSymbolicLinks: false, suppressErrors: false, onlyFiles: true }).catch((err: unknown) => {
      if (errnoCode(err) === "ENOENT") return [] as string[];
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot scan ${root}: ${(err as Error).message}`, { path: root, cause: err });
    });
    for (const path of files) {
      if (sinceMs > 0) {
        try {
          if (io.statSync(path).mtimeMs < sinceMs) continue;
        } catch (err) {
          if (errnoCode(err) === "ENOENT") continue;
          throw err;
        }
      }
      blobRefsOfFile(path, into);
      scanned++;
    }
  }
  return scanned;
}

const TRASH_RE = /^\.([0-9a-f]{64})\.\d+\.gc\.tmp$/;

/** Puts back blobs a killed gc had moved aside but not yet judged: this run judges them again. */
function restoreTrash(blobsDir: string): void {
  let names: string[];
  try {
    names = io.readdirSync(blobsDir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = TRASH_RE.exec(name);
    if (m === null) continue;
    try {
      if (io.existsSync(join(blobsDir, m[1]!))) io.rmSync(join(blobsDir, name), { force: true });
      else io.renameSync(join(blobsDir, name), join(blobsDir, m[1]!));
    } catch {
      // a concurrent gc owns it
    }
  }
}
