import { basename, join } from "node:path";
import { errnoCode } from "../errors.ts";
import { LinePuller, sameLine } from "../format/line-splitter.ts";
import { io } from "../io.ts";

/**
 * How a freshly migrated import relates to the store copy already at its target:
 * - `same`: identical header and entry lines;
 * - `storeAhead`: the store copy holds every line of the import and more (it was continued, or
 *   its header changed): leave it alone;
 * - `sourceAhead`: the import holds every entry line of the store copy and more, under the same
 *   header (the source grew): replacing the store copy loses nothing;
 * - `diverged`: each has lines the other lacks: a conflict, nothing may be replaced.
 */
export type ImportRelation = "same" | "storeAhead" | "sourceAhead" | "diverged";

/** Compares two session files line by line (exact bytes), streaming both; memory stays bounded. */
export function compareImport(fresh: string, existing: string, chunkSize: number): ImportRelation {
  const freshFd = io.openSync(fresh, "r");
  try {
    const existingFd = io.openSync(existing, "r");
    try {
      const a = new LinePuller((into) => io.readSync(freshFd, into, 0, into.length, null), chunkSize);
      const b = new LinePuller((into) => io.readSync(existingFd, into, 0, into.length, null), chunkSize);
      const headerA = a.next();
      const headerB = b.next();
      const sameHeader = headerA !== null && headerB !== null && sameLine(headerA, headerB);
      for (;;) {
        const lineA = a.next();
        const lineB = b.next();
        if (lineA === null && lineB === null) return sameHeader ? "same" : "storeAhead";
        if (lineA === null) return "storeAhead";
        if (lineB === null) return sameHeader ? "sourceAhead" : "diverged";
        if (!sameLine(lineA, lineB)) return "diverged";
      }
    } finally {
      io.closeSync(existingFd);
    }
  } finally {
    io.closeSync(freshFd);
  }
}

/**
 * Where the store holds the session a new import would write to `target`, when that is another
 * cwd's bucket (the source's header moved it since its last import), or null. Session files are
 * named after the session (time and id), so its copy has `target`'s name in some bucket: a
 * `readdir` of the sessions directory and a `stat` per bucket.
 */
export function storeCopyElsewhere(sessionsDir: string, target: string): string | null {
  let buckets: string[];
  try {
    buckets = io.readdirSync(sessionsDir);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw err;
  }
  const name = basename(target);
  for (const bucket of buckets) {
    const path = join(sessionsDir, bucket, name);
    if (path !== target && io.statSync(path, { throwIfNoEntry: false })?.isFile()) return path;
  }
  return null;
}
