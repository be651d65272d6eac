import type { Stats } from "node:fs";
import { join } from "node:path";
import { listEntries, openGuarded, readGuarded } from "../../artifacts/artifact-files.ts";
import { publishNew } from "../../io-exclusive.ts";
import { LOG_FILE, metaFileName } from "../../artifacts/artifact-names.ts";
import { ArtifactStore } from "../../artifacts/artifact-store.ts";
import { decodeMeta } from "../../artifacts/metadata.ts";
import { errnoCode, type StoreWarning, TranscriptStoreError } from "../../errors.ts";
import { ensureDir, FILE_MODE, io, isTempFileName, removeQuietly, tempPathFor, writeFully } from "../../io.ts";
import { isStorableArtifactId, type PgStore } from "./db/index.ts";
import { makeWorkingDir, removeWorkingDir } from "./pg-working-dirs.ts";
import type { SecretRedactor } from "../../prepare/redact-secrets.ts";
import type { ArtifactCipher } from "../../artifacts/artifact-cipher.ts";

/** Bytes read from a working file per piece sent to the database (re-cut there into stored chunks). */
const READ_PIECE_BYTES = 1024 * 1024;

/** What a file was when it last matched its row. A rename over it changes the inode. */
interface Synced {
  size: number;
  mtimeMs: number;
  ino: number;
}

const sameFile = (a: Synced, st: Stats) => a.size === st.size && a.mtimeMs === st.mtimeMs && a.ino === st.ino;

/**
 * A database session's artifacts: rows of the session (`artifacts`, `artifact_chunks`), worked on
 * through the same synchronous `ArtifactStore` as a file session, over a local working directory
 * (pg-working-dirs.ts). Opening fills it from the rows, chunk by chunk; `flush()` writes back new
 * and changed files. The directory is a cache the OS may empty at any time (a temp-dir cleaner):
 * a file that vanished is restored from its row, never taken for a deletion. A row is deleted
 * only when the store removed the artifact, which it records as a tombstone in its metadata.
 */
export class PgArtifactMirror {
  private workDir: string | null = null;
  private dir: string | null = null;
  private store: ArtifactStore | null = null;
  /** Files known to match their row. */
  private readonly synced = new Map<string, Synced>();
  /** Rows whose chunks do not add up (reported at open): never written over nor deleted from here. */
  private readonly damaged = new Set<string>();

  constructor(
    private readonly pg: PgStore,
    private readonly sessionId: string,
    private readonly options: {
      fsync: boolean;
      onWarning: (w: StoreWarning) => void;
      redactor?: SecretRedactor | null;
      /** An encrypted session's artifact cipher: its files are sealed in the working directory, so its rows hold them sealed. */
      cipher?: ArtifactCipher | null;
    },
  ) {}

  /** Fills the working directory from the session's rows; on failure it leaves no directory behind. */
  async load(): Promise<void> {
    const infos = await this.pg.artifacts.list(this.sessionId);
    if (infos.length === 0) return; // no working directory until there is something to hold
    try {
      const dir = this.ensureDir();
      this.prepare(dir);
      for (const info of infos) {
        if (info.damaged) {
          this.damaged.add(info.id);
          this.warn("PERSISTENCE_FAILED", `Artifact ${info.id} is damaged in the database (its chunks do not add up); left there, unread`);
          continue;
        }
        await this.materialize(info.id);
      }
    } catch (err) {
      this.dispose();
      throw err;
    }
  }

  artifacts(): ArtifactStore {
    if (this.store === null) this.store = new ArtifactStore(this.ensureDir(), this.options);
    return this.store;
  }

  /**
   * Writes what changed in the working directory back to rows, fenced by the writer's lease
   * `token`: new and changed files are stored (streamed, chunk by chunk); a file that vanished is
   * restored from its row, unless the store removed that artifact (its tombstone): then its row
   * is deleted. An unreadable directory is `PERSISTENCE_FAILED` and changes no row.
   */
  async sync(token: number): Promise<void> {
    const dir = this.dir;
    if (dir === null) return;
    let entries: ReturnType<typeof listEntries>;
    try {
      entries = listEntries(dir); // a directory removed whole (a cleaner) lists as empty
    } catch (err) {
      throw this.failed(`Could not list the artifacts' working directory: ${(err as Error).message}`, err);
    }
    const present = new Set<string>();
    for (const entry of entries) {
      if (!entry.isFile() || isTempFileName(entry.name)) continue;
      if (!isStorableArtifactId(entry.name)) {
        this.warn("PERSISTENCE_FAILED", `Artifact file ${JSON.stringify(entry.name)} has no storable name; kept locally only`);
        continue;
      }
      if (await this.writeBack(entry.name, token)) present.add(entry.name);
    }
    for (const name of [...this.synced.keys()]) {
      if (present.has(name)) continue;
      if (this.removedByStore(name)) {
        await this.pg.artifacts.delete(this.sessionId, name, token);
        this.synced.delete(name);
      } else {
        this.warn("ARTIFACT_NOT_FOUND", `Artifact file ${name} vanished from the working directory; restored from the database`);
        await this.materialize(name);
      }
    }
  }

  /**
   * Removes the working directory (close). The store stays the session's (a closed session's
   * `artifacts` is not a new directory); nothing written to it afterwards reaches the database.
   */
  dispose(): void {
    if (this.workDir !== null) removeWorkingDir(this.workDir);
    this.synced.clear();
  }

  /** Stores `name` when it changed since it last matched its row; false when it is not there (any more). */
  private async writeBack(name: string, token: number): Promise<boolean> {
    const path = join(this.dir!, name);
    let fd: number | null | "unsafe";
    try {
      fd = openGuarded(path);
    } catch (err) {
      throw this.failed(`Could not read artifact file ${name}: ${(err as Error).message}`, err, path);
    }
    if (fd === "unsafe") return false; // the store never made it: a symlink or special file planted there
    if (fd === null) return false;
    try {
      let st: Stats;
      try {
        st = io.fstatSync(fd);
      } catch (err) {
        throw this.failed(`Could not read artifact file ${name}: ${(err as Error).message}`, err, path);
      }
      const before = this.synced.get(name);
      if (before !== undefined && sameFile(before, st)) return true;
      if (this.damaged.has(name)) {
        this.warn("PERSISTENCE_FAILED", `Artifact ${name} is damaged in the database; the local file is not written over it`);
        return true;
      }
      await this.pg.artifacts.put(this.sessionId, name, piecesOf(fd, path), { mtimeMs: st.mtimeMs }, token);
      this.synced.set(name, { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino });
      return true;
    } finally {
      io.closeSync(fd);
    }
  }

  /**
   * Writes row `name` into the working directory: streamed into a temp file, given the stored
   * mtime and a fresh access time (a cleaner ageing files by atime leaves it alone), then published
   * without replacing anything there (a file the store wrote meanwhile is newer).
   */
  private async materialize(name: string): Promise<void> {
    const dir = this.dir!;
    this.prepare(dir);
    // a short temp name: an id may already be 255 bytes, the longest file name
    const temp = tempPathFor(join(dir, name), "pg-restore");
    let fd: number | undefined;
    try {
      fd = io.openSync(temp, "wx", FILE_MODE);
      const out = fd;
      const info = await this.pg.artifacts.read(this.sessionId, name, (chunk) => {
        try {
          writeFully(out, chunk);
        } catch (err) {
          throw this.failed(`Could not write artifact ${name} into the working directory: ${(err as Error).message}`, err, temp);
        }
      });
      if (this.options.fsync) io.fsyncSync(fd);
      io.closeSync(fd);
      fd = undefined;
      if (info === null) {
        this.synced.delete(name);
        removeQuietly(temp);
        return;
      }
      const mtimeMs = typeof info.meta.mtimeMs === "number" ? info.meta.mtimeMs : info.created.getTime();
      io.utimesSync(temp, new Date(), new Date(mtimeMs));
      const path = join(dir, name);
      if (publishNew(temp, path)) {
        const st = io.lstatSync(path);
        this.synced.set(name, { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino });
      }
    } catch (err) {
      if (fd !== undefined) io.closeSync(fd);
      removeQuietly(temp);
      if (err instanceof TranscriptStoreError) throw err;
      throw this.failed(`Could not write artifact ${name} into the working directory: ${(err as Error).message}`, err, join(dir, name));
    }
  }

  /** True when the store removed the artifact `name` holds: its metadata is a tombstone. */
  private removedByStore(name: string): boolean {
    const m = LOG_FILE.exec(name);
    if (m === null) return false; // metadata and agent outputs are never removed, only replaced
    let bytes: ReturnType<typeof readGuarded>;
    try {
      bytes = readGuarded(join(this.dir!, metaFileName(m[1]!)));
    } catch {
      return false;
    }
    return bytes instanceof Buffer && decodeMeta(bytes, m[1]!).kind === "tombstone";
  }

  private prepare(dir: string): void {
    try {
      ensureDir(dir);
    } catch (err) {
      throw this.failed(`Could not create the artifacts' working directory: ${(err as Error).message}`, err);
    }
  }

  private ensureDir(): string {
    if (this.dir === null) {
      this.workDir = makeWorkingDir();
      this.dir = join(this.workDir, "artifacts");
    }
    return this.dir;
  }

  private warn(code: StoreWarning["code"], message: string): void {
    this.options.onWarning({ code, message, path: this.dir ?? undefined });
  }

  private failed(message: string, cause: unknown, path: string | undefined = this.dir ?? undefined): TranscriptStoreError {
    return localFailure(message, cause, path);
  }
}

/**
 * A failure of this process's own file system (EACCES, ENOSPC, …) as PERSISTENCE_FAILED. The errno
 * is named in the message, not kept as `cause`: flush retries a PERSISTENCE_FAILED whose cause is an
 * errno as a lost connection (pg-reconnect.ts), and a local failure is not one.
 */
function localFailure(message: string, err: unknown, path: string | undefined): TranscriptStoreError {
  if (err instanceof TranscriptStoreError) return err;
  const code = errnoCode(err);
  return new TranscriptStoreError("PERSISTENCE_FAILED", code === undefined ? message : `${message} (${code})`, { path });
}

/** A file's bytes as pieces read one at a time (the database re-cuts them into its chunks). */
function* piecesOf(fd: number, path: string): Iterable<Buffer> {
  let position = 0;
  for (;;) {
    const piece = Buffer.allocUnsafe(READ_PIECE_BYTES);
    let n: number;
    try {
      n = io.readSync(fd, piece, 0, piece.length, position);
    } catch (err) {
      throw localFailure(`Could not read artifact file: ${(err as Error).message}`, err, path);
    }
    if (n <= 0) return;
    position += n;
    yield piece.subarray(0, n);
  }
}
