import { basename, join } from "node:path";
import { errnoCode } from "../errors.ts";
import { LinePuller } from "../format/line-splitter.ts";
import { io } from "../io.ts";
import { relateSessions, type SessionRelation } from "../storage/session-relation.ts";

/** How a freshly migrated import relates to the store copy already at its target (the one rule: `SessionRelation`). */
export type ImportRelation = SessionRelation;

/** Compares two session files line by line (exact bytes), streaming both; memory stays bounded. */
export function compareImport(fresh: string, existing: string, chunkSize: number): ImportRelation {
  const freshFd = io.openSync(fresh, "r");
  try {
    const existingFd = io.openSync(existing, "r");
    try {
      return relateSessions(
        linesOf(new LinePuller((into) => io.readSync(freshFd, into, 0, into.length, null), chunkSize)),
        linesOf(new LinePuller((into) => io.readSync(existingFd, into, 0, into.length, null), chunkSize)),
      );
    } finally {
      io.closeSync(existingFd);
    }
  } finally {
    io.closeSync(freshFd);
  }
}

/** A file's lines as the rule compares them: each with its `\n` (the last maybe without). */
function* linesOf(reader: LinePuller): Generator<Buffer> {
  for (let line = reader.next(); line !== null; line = reader.next())
    yield line.terminated ? Buffer.concat([line.bytes, NEWLINE]) : line.bytes;
}

const NEWLINE = Buffer.from("\n");

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
