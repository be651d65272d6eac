import { basename, join } from "node:path";
import { errnoCode } from "../errors.ts";
import { io } from "../io.ts";
import { relateSessions, type SessionRelation } from "../storage/session-relation.ts";

/** Hands out a file's lines one at a time (each with its `\n`, the last maybe without). */
class LineReader {
  private buffer = Buffer.alloc(0);
  private start = 0;
  /** Where the search for the next `\n` resumes, so a long line is scanned once. */
  private scanned = 0;
  private eof = false;

  constructor(
    private readonly fd: number,
    private readonly chunkSize: number,
  ) {}

  next(): Buffer | null {
    for (;;) {
      const nl = this.buffer.indexOf(0x0a, this.scanned);
      if (nl !== -1) {
        const line = this.buffer.subarray(this.start, nl + 1);
        this.start = this.scanned = nl + 1;
        return line;
      }
      if (this.eof) {
        if (this.start === this.buffer.length) return null;
        const rest = this.buffer.subarray(this.start);
        this.start = this.scanned = this.buffer.length;
        return rest;
      }
      const chunk = Buffer.allocUnsafe(this.chunkSize);
      const n = io.readSync(this.fd, chunk, 0, this.chunkSize, null);
      if (n === 0) this.eof = true;
      const kept = this.buffer.subarray(this.start);
      this.buffer = Buffer.concat([kept, chunk.subarray(0, n)]);
      this.scanned = kept.length;
      this.start = 0;
    }
  }
}

/** How a freshly migrated import relates to the store copy already at its target (the one rule: `SessionRelation`). */
export type ImportRelation = SessionRelation;

/** Compares two session files line by line (exact bytes), streaming both; memory stays bounded. */
export function compareImport(fresh: string, existing: string, chunkSize: number): ImportRelation {
  const freshFd = io.openSync(fresh, "r");
  try {
    const existingFd = io.openSync(existing, "r");
    try {
      return relateSessions(linesOf(new LineReader(freshFd, chunkSize)), linesOf(new LineReader(existingFd, chunkSize)));
    } finally {
      io.closeSync(existingFd);
    }
  } finally {
    io.closeSync(freshFd);
  }
}

function* linesOf(reader: LineReader): Generator<Buffer> {
  for (let line = reader.next(); line !== null; line = reader.next()) yield line;
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
