import { constants } from "node:fs";
import { join } from "node:path";
import { FILE_MODE, io, writeFileAtomic, writeFully } from "../io.ts";

/**
 * The blob directory's proof log, `<blobsDir>/.proven`: one `<sha256 hex> <stamp>` line per proof
 * that the file under that name, as identified by its stamp (inode, size, mtime), held exactly the
 * bytes of its name when it was written or re-hashed (and had not been modified in the last
 * `RACY_MS`). A later process trusts a blob without
 * re-hashing it only while the file's current stamp is the one recorded; a blob truncated or
 * rewritten in place has another stamp and is re-hashed (and found corrupt) on its next read.
 *
 * It is a cache, never a source of truth: an absent, unreadable or unwritable log, a symlink
 * under its name (never followed), a torn or foreign line only cost a re-hash. Appends are small
 * `O_APPEND` writes; when the log holds many more lines than proofs it is compacted by an atomic
 * rewrite, so it never grows without bound.
 */
export const PROOF_LOG_FILE = ".proven";

/** A log larger than this is not parsed (it is replaced by the next compaction). */
const MAX_LOG_BYTES = 16 << 20;

/**
 * A proof of a file modified less than this long ago is kept in memory only: a file system's
 * timestamps are coarse (a kernel tick; 2 s on FAT), so a same-size rewrite within the same tick
 * would keep the stamp. Such a blob is re-hashed once by a later process, which then records it.
 */
export const RACY_MS = 2000;

/** Compaction runs once the lines on disk exceed twice the live proofs plus this slack. */
const COMPACT_SLACK = 4096;

/** A proof (`<hash> <ino>:<size>:<mtimeMs>`) or a revocation (`<hash> -`, written when a re-hash failed). */
const LINE = /^([0-9a-f]{64}) (\d+:\d+:\d+(?:\.\d+)?|-)$/;
const REVOKED = "-";

export class ProofLog {
  readonly path: string;
  /** Lines believed to be in the file (read plus appended by this instance). */
  private lines = 0;
  /** Set after a write failed: this store keeps its proofs in memory only. */
  private disabled: boolean;

  /** `writable: false` (a read-only open's store): proofs are read but never recorded. */
  constructor(dir: string, writable = true) {
    this.path = join(dir, PROOF_LOG_FILE);
    this.disabled = !writable;
  }

  /** The proofs on disk, hash → stamp (the last line for a hash wins); empty when there is no usable log. */
  load(limit: number): Map<string, string> {
    const proofs = new Map<string, string>();
    let text: string;
    try {
      const fd = io.openSync(this.path, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        const stat = io.fstatSync(fd);
        if (!stat.isFile() || stat.size > MAX_LOG_BYTES) {
          this.lines = Number.MAX_SAFE_INTEGER; // compact (replace) it at the next proof
          return proofs;
        }
        text = io.readFileSync(fd, "latin1") as string;
      } finally {
        io.closeSync(fd);
      }
    } catch {
      return proofs; // absent, a symlink, unreadable: no shortcut
    }
    const rows = text.split("\n");
    // The last piece is empty after a complete final line, else a torn line: either way not a proof.
    rows.pop();
    this.lines = rows.length;
    for (const row of rows) {
      const match = LINE.exec(row);
      if (match === null) continue;
      proofs.delete(match[1]!); // re-insert: the map's order stays "oldest proof first"
      if (match[2] !== REVOKED) proofs.set(match[1]!, match[2]!);
      if (proofs.size > limit) proofs.delete(proofs.keys().next().value!);
    }
    return proofs;
  }

  /** Appends a revocation: the blob failed a re-hash, so no earlier proof of it holds. Never throws. */
  revoke(hash: string, live: ReadonlyMap<string, string>): void {
    this.record(hash, REVOKED, live);
  }

  /** Appends one proof; compacts to `live` when the file has grown well past it. Never throws. */
  record(hash: string, stamp: string, live: ReadonlyMap<string, string>): void {
    if (this.disabled) return;
    if (stamp !== REVOKED && !(Date.now() - Number(stamp.slice(stamp.lastIndexOf(":") + 1)) >= RACY_MS)) return;
    try {
      if (this.lines >= 2 * live.size + COMPACT_SLACK) {
        this.compact(live);
        return;
      }
      const fd = io.openSync(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, FILE_MODE);
      try {
        writeFully(fd, Buffer.from(`${hash} ${stamp}\n`, "latin1"));
      } finally {
        io.closeSync(fd);
      }
      this.lines++;
    } catch {
      this.disabled = true; // read-only or foreign directory, a symlink planted: proofs stay in memory
    }
  }

  /** Rewrites the log as exactly the live proofs (temp file + rename: readers see old or new). */
  private compact(live: ReadonlyMap<string, string>): void {
    let text = "";
    for (const [hash, stamp] of live) text += `${hash} ${stamp}\n`;
    writeFileAtomic(this.path, (emit) => emit(Buffer.from(text, "latin1")), { fsync: false });
    this.lines = live.size;
  }
}
