import { join } from "node:path";
import { TranscriptStoreError } from "../errors.ts";
import { ensureDir, io, writeFileAtomic } from "../io.ts";
import { createExclusive } from "../io-exclusive.ts";
import { directoryState, regularFileSize, removeFile } from "./artifact-files.ts";
import type { ArtifactIndex, Found } from "./artifact-index.ts";
import { metaFileName } from "./artifact-names.ts";
import { deriveMeta, encodeMeta, encodeTombstone } from "./metadata.ts";

/**
 * The life of an artifact id in one directory: claimed by an exclusive create of
 * `<id>.meta.json`, then holding metadata, and once removed (or given up) a tombstone. That file
 * is never deleted, so the exclusive create can never succeed twice for one id, whatever another
 * process's cleanup does meanwhile: an id, once issued in a directory, is never issued again.
 * Also guards the directory itself: it is checked with `lstat` before every write or removal, and
 * a symlink planted in its place is refused (`PERSISTENCE_FAILED`), never written through.
 */
export class IdLedger {
  private readonly dir: string;
  private readonly index: ArtifactIndex;
  private readonly fsync: boolean;
  /** Next id to try: found by one listing, then only ever grows (O(1) amortized per claim). */
  private nextId = -1;

  constructor(dir: string, index: ArtifactIndex, fsync: boolean) {
    this.dir = dir;
    this.index = index;
    this.fsync = fsync;
  }

  /** Creates the directory (0700) when missing; throws unless it is a real directory. */
  prepareDir(): void {
    let state: "missing" | "directory" | "unsafe";
    try {
      state = directoryState(this.dir);
      if (state === "missing") {
        ensureDir(this.dir, this.fsync);
        state = directoryState(this.dir);
      }
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not create artifacts directory: ${(err as Error).message}`, {
        path: this.dir,
        cause: err,
      });
    }
    if (state !== "directory") throw unsafeDirectory(this.dir);
  }

  /** False when there is no directory (nothing to remove); throws for a symlink planted in its place. */
  existingDir(): boolean {
    const state = directoryState(this.dir);
    if (state === "unsafe") throw unsafeDirectory(this.dir);
    return state === "directory";
  }

  /**
   * Claims the next id. The first claim starts above every id-prefixed name in the directory
   * (content, metadata, tombstones, files of other tools); after that a name another process
   * took is stepped over, so each process tries each id at most once.
   */
  claim(): string {
    this.prepareDir();
    if (this.nextId < 0) this.nextId = this.index.scanMaxId() + 1;
    for (;;) {
      const id = String(this.nextId);
      let claimed: boolean;
      try {
        claimed = createExclusive(join(this.dir, metaFileName(id)));
      } catch (err) {
        throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not reserve artifact id ${id}: ${(err as Error).message}`, {
          path: join(this.dir, metaFileName(id)),
          cause: err,
        });
      }
      this.nextId++;
      if (claimed) return id;
    }
  }

  /**
   * Gives up a claimed id after a failed write: its metadata becomes a tombstone, so the id stays
   * taken (a caller may already have shown `artifact://<id>`). If even that cannot be written the
   * claim (or the metadata written before the failure) stays, which keeps the id taken as well.
   */
  release(id: string): void {
    try {
      writeFileAtomic(join(this.dir, metaFileName(id)), encodeTombstone(id), { fsync: this.fsync });
    } catch {
      // the claim file still holds the id
    }
    this.index.forget(id);
  }

  /**
   * Skips a claimed id whose content name turned out to be taken, leaving that file as it was:
   * another tool's regular file stays readable under the id (metadata derived from it, as for any
   * file without ours); anything else (a planted symlink) stays unread, behind a tombstone.
   */
  skip(id: string, logName: string): void {
    const path = join(this.dir, logName);
    const derived = regularFileSize(path) === null ? null : deriveMeta(logName, io.lstatSync(path).mtimeMs);
    if (derived === null) {
      this.release(id);
      return;
    }
    try {
      writeFileAtomic(join(this.dir, metaFileName(id)), encodeMeta(derived), { fsync: this.fsync });
    } catch {
      this.release(id);
    }
    this.index.forget(id);
  }

  /**
   * Removes artifacts: the content file goes, the metadata is replaced by a tombstone (by rename,
   * so a fork's hard-linked copy keeps its record). Returns how many content files were removed.
   */
  remove(targets: Found[]): number {
    let removed = 0;
    try {
      for (const { meta } of targets) {
        if (removeFile(this.index.logPath(meta))) removed++;
        writeFileAtomic(join(this.dir, metaFileName(meta.id)), encodeTombstone(meta.id), { fsync: this.fsync });
        this.index.forget(meta.id);
      }
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not remove artifacts: ${(err as Error).message}`, {
        path: this.dir,
        cause: err,
      });
    }
    return removed;
  }
}

function unsafeDirectory(dir: string): TranscriptStoreError {
  return new TranscriptStoreError(
    "PERSISTENCE_FAILED",
    "Artifacts directory is a symlink or not a directory; refusing to write through it",
    { path: dir },
  );
}
