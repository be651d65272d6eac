import { join, resolve } from "node:path";
import type { Referrer } from "../blob/blob-referrers.ts";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { io } from "../io.ts";

/**
 * Every file gc reads in a registered place, whatever its name: a `tree`'s files at any depth, a
 * `dir`'s own files. Dot names are files like any other (pi's `open(path)` makes
 * `.session.jsonl`, people keep `sessions/.archive/`), and so are our own internal files
 * (quarantine, backups, move journals, lock declarations, temp files): reading a file that holds
 * no ref costs time, skipping one that does costs images. Only `exclude`d directories (the blob
 * directory, when it lies inside a tree) are not entered.
 *
 * - A symlink to a file is read through (a session moved away with a link left behind); one that
 *   cannot be resolved (dangling, a loop, no permission) makes gc refuse: what it hides cannot be
 *   read. A symlink to a directory is not entered: nothing of ours is ever written through one
 *   (session directories in a tree are refused when they are links), its target is a registered
 *   place of its own if anything of ours lives there, and entering links could walk the whole disk.
 * - FIFOs, sockets and devices are not sessions and are never opened (a FIFO would block).
 * - A directory or file that cannot be read makes gc refuse (`PERSISTENCE_FAILED`) before anything
 *   is deleted.
 */
export function filesOfPlace(place: Referrer, exclude: ReadonlySet<string>): string[] {
  const files: string[] = [];
  const pending = [resolve(place.path)];
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    let names: string[];
    try {
      names = io.readdirSync(dir);
    } catch (err) {
      if (errnoCode(err) === "ENOENT" && dir !== resolve(place.path)) continue; // removed meanwhile
      throw unreadable(dir, err);
    }
    for (const name of names) {
      const path = join(dir, name);
      const kind = kindOf(path);
      if (kind === "file") files.push(path);
      else if (kind === "dir" && place.kind === "tree" && !exclude.has(path)) pending.push(path);
    }
  }
  return files;
}

/** What gc does with one name: read it as a file, enter it as a directory, or leave it. */
function kindOf(path: string): "file" | "dir" | "other" | "gone" {
  let stat;
  try {
    stat = io.lstatSync(path, { throwIfNoEntry: false });
  } catch (err) {
    throw unreadable(path, err);
  }
  if (stat === undefined) return "gone";
  if (stat.isFile()) return "file";
  if (stat.isDirectory()) return "dir";
  if (!stat.isSymbolicLink()) return "other";
  let target;
  try {
    target = io.statSync(path);
  } catch (err) {
    if (io.lstatSync(path, { throwIfNoEntry: false }) === undefined) return "gone"; // the link was removed meanwhile
    throw unreadable(path, err);
  }
  return target.isFile() ? "file" : "other";
}

function unreadable(path: string, err: unknown): TranscriptStoreError {
  return new TranscriptStoreError("PERSISTENCE_FAILED", `gc refuses to run: cannot read ${path}: ${(err as Error).message}`, {
    path,
    cause: err,
  });
}
