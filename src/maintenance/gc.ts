import { join, resolve } from "node:path";
import { isBlobHash } from "../blob/blob-ref.ts";
import { BlobStore } from "../blob/blob-store.ts";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { isInside, readReferrers, type Referrer } from "../blob/blob-referrers.ts";
import { lockBlobStore } from "../blob/gc-lock.ts";
import { io, isTempFileName } from "../io.ts";
import { isLeftoverLock, removeLeftoverLock } from "../session/session-lock.ts";
import { blobRefsOfFile } from "./blob-refs.ts";
import { filesOfPlace } from "./gc-files.ts";

/** Blobs younger than this are never collected (a writer may not have appended its line yet). @default 1 h */
export const DEFAULT_GC_GRACE_MS = 60 * 60 * 1000;

/** Temp files younger than this may belong to a writer still writing them. */
const TEMP_MIN_AGE_MS = 15 * 60 * 1000;

export interface GcOptions {
  /**
   * Sessions roots to mark besides every place registered in the blob store. A root that does not
   * exist makes gc refuse (a typo must not make every blob look unreferenced), except an
   * unregistered one when the store has a registry (nothing of this version ever wrote there).
   */
  sessionRoots: string[];
  blobsDir: string;
  graceMs?: number;
  dryRun?: boolean;
  now?: () => number;
}

export interface GcReport {
  /** Every place marked: the roots given and the places registered in the blob store. */
  places: Referrer[];
  filesScanned: number;
  referenced: number;
  blobs: number;
  deleted: string[];
  /** Unreferenced but younger than the grace period. */
  keptYoung: number;
  bytesFreed: number;
  tempFilesRemoved: number;
  /**
   * Lock declarations (`<file>.lock.json`, with their lock directory if any) of writers never
   * closed, removed (or, in a dry run, that would be): only those no live holder can own.
   */
  lockFilesRemoved: number;
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
  const release = await lockBlobStore(options.blobsDir);
  try {
    // Read under the lock: a forget rewriting the registry holds it too.
    const places = placesToMark(options);
    return await sweep(options, store, places, graceMs, cutoff, now);
  } finally {
    await release();
  }
}

async function sweep(
  options: GcOptions,
  store: BlobStore,
  places: Referrer[],
  _graceMs: number,
  cutoff: number,
  now: () => number,
): Promise<GcReport> {
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
  const declarations: string[] = [];
  const filesScanned = await markFiles(places, options.blobsDir, referenced, 0, declarations);
  const report: GcReport = {
    places,
    filesScanned,
    referenced: referenced.size,
    blobs: candidates.length,
    deleted: [],
    keptYoung: 0,
    bytesFreed: 0,
    tempFilesRemoved: 0,
    lockFilesRemoved: 0,
    dryRun: options.dryRun === true,
  };
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
    try {
      await markFiles(places, options.blobsDir, late, markStarted - 2000);
      // A place registered since the first look (its writer registers before it writes a ref): all of it.
      const added = placesToMark(options).filter((p) => !places.some((q) => q.kind === p.kind && q.path === p.path));
      await markFiles(added, options.blobsDir, late, 0);
    } catch (err) {
      putBack(options.blobsDir, trashed);
      throw err;
    }
    for (const t of trashed) {
      const path = join(options.blobsDir, t.hash);
      try {
        if (late.has(t.hash) && !io.existsSync(path)) {
          io.renameSync(t.trash, path);
          continue;
        }
        // Not forced: only a blob this run really removed is reported as deleted.
        io.unlinkSync(t.trash);
      } catch (err) {
        if (errnoCode(err) !== "ENOENT") throw err;
        continue;
      }
      if (late.has(t.hash)) continue;
      report.deleted.push(t.hash);
      report.bytesFreed += t.size;
    }
  }
  try {
    for (const name of io.readdirSync(options.blobsDir)) {
      if (!isTempFileName(name) || name.endsWith(`.${process.pid}.gc.tmp`)) continue;
      const path = join(options.blobsDir, name);
      // In-flight temp files of live writers are young: only long-abandoned ones go.
      if (io.statSync(path).mtimeMs > Math.min(cutoff, now() - TEMP_MIN_AGE_MS)) continue;
      report.tempFilesRemoved++;
      if (!report.dryRun) io.rmSync(path, { force: true });
    }
  } catch (err) {
    if (errnoCode(err) !== "ENOENT") throw err;
  }
  report.lockFilesRemoved = await removeLeftoverLocks(declarations, report.dryRun, Date.now());
  return report;
}

const DECLARATION_SUFFIX = ".lock.json";

/**
 * Removes the lock files of writers that were never closed (pi never calls close(); a killed
 * process), found among the scanned files: only a declaration of ours in form whose lock directory
 * is absent or older than the holder's declared stale period, taken and released as a taker would.
 */
async function removeLeftoverLocks(declarations: readonly string[], dryRun: boolean, now: number): Promise<number> {
  let removed = 0;
  for (const declaration of declarations) {
    const session = declaration.slice(0, -DECLARATION_SUFFIX.length);
    if (dryRun ? isLeftoverLock(session, now) : await removeLeftoverLock(session)) removed++;
  }
  return removed;
}

/**
 * The places to mark: the given roots and every registered place, each checked to exist and be a
 * directory. Any that is missing or unreadable makes gc refuse with `REFERRER_MISSING` before
 * anything is deleted; the user forgets a place that is gone for good (`forgetReferrers`).
 */
function placesToMark(options: GcOptions): Referrer[] {
  const registered = readReferrers(options.blobsDir);
  const given: Referrer[] = options.sessionRoots.map((p) => ({ kind: "tree", path: resolve(p) }));
  const problems: string[] = [];
  const places: Referrer[] = [];
  for (const place of [...given, ...(registered ?? [])]) {
    if (places.some((p) => p.path === place.path && (p.kind === "tree" || place.kind === "dir"))) continue;
    const isRegistered = registered?.some((r) => r.path === place.path) ?? false;
    let stat;
    try {
      stat = io.statSync(place.path);
    } catch (err) {
      // An unregistered given root that is absent: nothing of this version wrote there.
      // An absent given root of a store with no blobs, or whose registry never named it: nothing
      // that references these blobs was written there.
      if (errnoCode(err) === "ENOENT" && !isRegistered && (registered !== null || !hasBlobs(options.blobsDir))) continue;
      problems.push(`${place.path} (${errnoCode(err) === "ENOENT" ? "missing" : (err as Error).message})`);
      continue;
    }
    if (!stat.isDirectory()) problems.push(`${place.path} (not a directory)`);
    else places.push(place);
  }
  if (problems.length > 0) {
    throw new TranscriptStoreError(
      "REFERRER_MISSING",
      `gc refuses to run: sessions that may reference this blob store cannot be read at ${problems.join(", ")}. ` +
        "Restore them, or forget a place that is gone for good (gc --forget <path>).",
      { path: options.blobsDir },
    );
  }
  return places.filter((p) => p.kind === "tree" || !places.some((t) => t.kind === "tree" && isInside(p.path, t.path)));
}

function hasBlobs(blobsDir: string): boolean {
  try {
    return io.readdirSync(blobsDir).some((name) => isBlobHash(name));
  } catch {
    return false;
  }
}

/**
 * Marks the refs of every file of the places (`filesOfPlace`: every name, dot names too) modified
 * at or after `sinceMs`; the lock declarations among them are collected into `declarations`.
 */
async function markFiles(
  places: readonly Referrer[],
  blobsDir: string,
  into: Set<string>,
  sinceMs: number,
  declarations?: string[],
): Promise<number> {
  let scanned = 0;
  const exclude = new Set([resolve(blobsDir)]);
  for (const place of places) {
    for (const path of filesOfPlace(place, exclude)) {
      if (declarations !== undefined && path.endsWith(DECLARATION_SUFFIX)) declarations.push(path);
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

/** Undoes the first phase of a sweep that cannot finish: every blob moved aside goes back. */
function putBack(blobsDir: string, trashed: ReadonlyArray<{ hash: string; trash: string }>): void {
  for (const t of trashed) {
    try {
      if (io.existsSync(join(blobsDir, t.hash))) io.unlinkSync(t.trash);
      else io.renameSync(t.trash, join(blobsDir, t.hash));
    } catch {
      // left as a trash name: the next gc's restoreTrash puts it back
    }
  }
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
