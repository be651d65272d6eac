import * as fs from "node:fs";
import { resolve } from "node:path";
import lockfile from "proper-lockfile";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { io, writeFileAtomic } from "../io.ts";

/** Lock age after which a lock whose holder stopped refreshing it is taken over. @default 10000 */
export const DEFAULT_LOCK_STALE_MS = 10_000;

/** proper-lockfile's floor for `stale`. */
const MIN_STALE_MS = 2000;

/**
 * Share of the stale period after the last refresh during which an append trusts the lock without
 * looking at it. Past it, the append checks (one stat) that the lock is still ours and fresh.
 */
const TRUST_SHARE = 0.5;

/**
 * How often the library refreshes the lock (`updateMs`) and how long after a refresh an append
 * trusts it (`trustedMs`). The refresh comes at a third of the stale period, before the trust
 * ends (at half), so an append checks the lock on disk only when the heartbeat is late by a sixth
 * of the period (an event loop blocked that long); a refresh due exactly when the trust ended made
 * every append of a blocked loop (thousands of sessions appended round-robin) refresh its lock
 * synchronously once per period.
 */
export function heartbeatTiming(staleMs: number, holderStaleMs: number): { updateMs: number; trustedMs: number } {
  return { updateMs: Math.max(1000, Math.floor(Math.min(staleMs, holderStaleMs) / 3)), trustedMs: staleMs * TRUST_SHARE };
}

export interface SessionLockOptions {
  staleMs?: number;
  /** Called (once) when the lock was lost, e.g. its directory was removed or refreshed late. */
  onCompromised: (err: Error) => void;
}

/** A held single-writer lock on one session path. */
export interface SessionLock {
  readonly path: string;
  /**
   * Throws `SESSION_LOCKED` when the lock may no longer be ours (taken over, removed, or so old
   * that a taker could take it). Costs a clock read while the heartbeat is recent, a stat after.
   */
  assertHeld(): void;
  release(): Promise<void>;
}

/** What a holder declares beside its lock: its own stale period is the one takers must use. */
interface LockDeclaration {
  pid: number;
  staleMs: number;
}

/** `<file>.lock.json`: the holder's declaration, read by anyone about to take the lock over. */
export function lockDeclarationPathOf(path: string): string {
  return `${path}.lock.json`;
}

function readDeclaration(path: string): LockDeclaration | null {
  let fd: number | undefined;
  try {
    fd = io.openSync(lockDeclarationPathOf(path), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    const buf = Buffer.alloc(256);
    const n = io.readSync(fd, buf, 0, buf.length, 0);
    const value = JSON.parse(buf.toString("utf8", 0, n)) as Partial<LockDeclaration>;
    if (typeof value.staleMs !== "number" || !(value.staleMs >= MIN_STALE_MS)) return null;
    return { pid: typeof value.pid === "number" ? value.pid : 0, staleMs: value.staleMs };
  } catch {
    return null;
  } finally {
    if (fd !== undefined) io.closeSync(fd);
  }
}

function writeDeclaration(path: string, declaration: LockDeclaration): void {
  try {
    // The rename replaces a link planted at the name instead of writing through it.
    writeFileAtomic(lockDeclarationPathOf(path), Buffer.from(JSON.stringify(declaration)), { fsync: false });
  } catch {
    // Without a declaration takers fall back to their own stale period: the lock still works.
  }
}

function removeDeclaration(path: string): void {
  try {
    io.unlinkSync(lockDeclarationPathOf(path));
  } catch {
    // absent
  }
}

/**
 * Paths whose lock this process holds and has not released (pi never calls close()). proper-lockfile
 * removes its lock directories when the process exits; this removes their declarations then, so a
 * manager never closed leaves nothing behind. A declaration naming another pid is a taker's: kept.
 */
const heldDeclarations = new Set<{ readonly path: string }>();
let exitHookInstalled = false;

/** Registers a held lock's declaration for removal at exit; returns the token that unregisters it. */
function trackDeclaration(path: string): { readonly path: string } {
  const token = { path: resolve(path) };
  heldDeclarations.add(token);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const held of heldDeclarations) removeOwnDeclaration(held);
    });
  }
  return token;
}

/** At exit: removes a still-held lock's declaration if it names this process. */
function removeOwnDeclaration(token: { readonly path: string }): void {
  if (!heldDeclarations.delete(token)) return;
  if (readDeclaration(token.path)?.pid === process.pid) removeDeclaration(token.path);
}

/**
 * The stale period a taker must use for the lock at `path`: the holder's declared one while a lock
 * directory exists. A declaration without a lock beside it is a leftover of a holder that is gone
 * (the next holder overwrites it): it says nothing about the lock about to be taken.
 */
function holderStaleMsOf(path: string): number | null {
  if (io.lstatSync(`${path}.lock`, { throwIfNoEntry: false }) === undefined) return null;
  return readDeclaration(path)?.staleMs ?? null;
}

/**
 * Whether the lock files at `path` (declaration, and lock directory if any) provably belong to no
 * live holder: the declaration is ours in form, and the lock directory is absent or older than the
 * stale period the declaration names. Judged without taking the lock (gc's dry run).
 */
export function isLeftoverLock(path: string, now: number = Date.now()): boolean {
  const declaration = readDeclaration(path);
  if (declaration === null) return false;
  const dir = io.lstatSync(`${path}.lock`, { throwIfNoEntry: false });
  return dir === undefined || now - dir.mtimeMs > declaration.staleMs;
}

/**
 * Removes the lock files a holder that was never closed left at `path`, only if they provably
 * belong to no live holder: the lock is taken (by its holder's declared stale period, as any taker
 * would) and released at once, which removes the directory and the declaration. False (nothing
 * touched) when the declaration is not one of ours or a live holder has the lock.
 */
export async function removeLeftoverLock(path: string): Promise<boolean> {
  if (readDeclaration(path) === null) return false;
  let lock: SessionLock;
  try {
    lock = await acquireSessionLock(path, { onCompromised: () => {} });
  } catch (err) {
    if (err instanceof TranscriptStoreError && err.code === "SESSION_LOCKED") return false;
    throw err;
  }
  await lock.release();
  return true;
}

/**
 * Tracks what the lock directory's mtime is while we hold it. proper-lockfile refreshes the mtime
 * on a timer and treats any other mtime as a takeover; when an append finds the heartbeat late
 * (a blocked event loop), it refreshes the mtime itself, and this view makes the library's next
 * heartbeat see that refresh as its own instead of declaring the lock compromised.
 */
class LockHeartbeat {
  /** mtime (ms) last written by the library, as the library remembers it. */
  private libraryMtime: Date | null = null;
  /** mtime (ms) actually on disk after our last refresh of either kind. */
  mtimeMs = 0;
  /** Wall clock of the last refresh of either kind. */
  refreshedAt = Date.now();
  /**
   * mtimes (ms) the library is writing right now: its `utimes` is issued, its callback (which
   * records the new mtime) has not run yet. The file may already carry one of them.
   */
  private readonly libraryPendingMs = new Set<number>();

  /** Called before the lock directory is removed synchronously (at exit: the declaration goes first). */
  onRemoveSync: () => void = () => {};

  constructor(readonly lockDir: string) {}

  /** The `fs` handed to proper-lockfile: real calls, with the lock directory's mtimes observed. */
  fs(): typeof fs {
    const utimes = (p: fs.PathLike, a: fs.TimeLike, m: fs.TimeLike, cb: (err: NodeJS.ErrnoException | null) => void) => {
      const pending = p === this.lockDir && m instanceof Date ? m.getTime() : null;
      if (pending !== null) this.libraryPendingMs.add(pending);
      fs.utimes(p, a, m, (err) => {
        if (pending !== null) this.libraryPendingMs.delete(pending);
        if (!err && p === this.lockDir) this.recordLibraryRefresh(m as Date);
        cb(err);
      });
    };
    const stat = (p: fs.PathLike, cb: (err: NodeJS.ErrnoException | null, st?: fs.Stats) => void) => {
      fs.stat(p, (err, st) => (err ? cb(err, st) : cb(null, this.libraryView(p, st))));
    };
    // proper-lockfile's sync API calls these instead (lockSync and its heartbeat).
    const utimesSync = (p: fs.PathLike, a: fs.TimeLike, m: fs.TimeLike) => {
      fs.utimesSync(p, a, m);
      if (p === this.lockDir) this.recordLibraryRefresh(m as Date);
    };
    const statSync = (p: fs.PathLike) => this.libraryView(p, fs.statSync(p));
    // proper-lockfile removes held lock directories with this at process exit, signals included.
    const rmdirSync = (p: fs.PathLike) => {
      if (p === this.lockDir) this.onRemoveSync();
      fs.rmdirSync(p);
    };
    return { ...fs, utimes, stat, utimesSync, statSync, rmdirSync } as unknown as typeof fs;
  }

  /** Our own out-of-band refresh of the lock directory: show the library the mtime it last wrote. */
  private libraryView(p: fs.PathLike, st: fs.Stats): fs.Stats {
    if (p !== this.lockDir || this.libraryMtime === null) return st;
    if (st.mtimeMs !== this.mtimeMs || st.mtimeMs === this.libraryMtime.getTime()) return st;
    const view = Object.create(st) as fs.Stats;
    Object.defineProperty(view, "mtime", { value: this.libraryMtime });
    return view;
  }

  private recordLibraryRefresh(m: Date): void {
    this.libraryMtime = new Date(m.getTime());
    try {
      this.mtimeMs = io.statSync(this.lockDir).mtimeMs;
    } catch {
      this.mtimeMs = m.getTime();
    }
    this.refreshedAt = Date.now();
  }

  /** After acquisition: the mtime the library probed is ours. */
  acquired(): void {
    try {
      const st = io.statSync(this.lockDir);
      this.mtimeMs = st.mtimeMs;
      this.libraryMtime ??= st.mtime;
    } catch {
      // checked again before the first late append
    }
    this.refreshedAt = Date.now();
  }

  /** Refreshes the lock now if it is still ours; false when it is not. */
  /**
   * Whether the lock directory's mtime on disk is one we wrote: the last one recorded, or one the
   * library is writing right now (an append can run between its syscall and its callback).
   * Sub-millisecond tolerance: a Date's milliseconds round-trip through utimes' seconds.
   */
  private isOwnMtime(mtimeMs: number): boolean {
    if (mtimeMs === this.mtimeMs) return true;
    for (const pending of this.libraryPendingMs) if (Math.abs(mtimeMs - pending) < 1) return true;
    return false;
  }

  refreshIfOurs(): boolean {
    let st: fs.Stats;
    try {
      st = io.lstatSync(this.lockDir);
    } catch {
      return false;
    }
    if (!st.isDirectory() || !this.isOwnMtime(st.mtimeMs)) return false;
    const now = new Date();
    try {
      io.utimesSync(this.lockDir, now, now);
      const after = io.statSync(this.lockDir);
      // A taker that replaced the directory between the two stats gives another inode.
      if (after.ino !== st.ino) return false;
      this.mtimeMs = after.mtimeMs;
    } catch {
      return false;
    }
    this.refreshedAt = Date.now();
    return true;
  }
}

/**
 * Takes the single-writer lock of a session file (a `<file>.lock` directory refreshed as a
 * heartbeat). Fails at once with `SESSION_LOCKED` when another live writer, in this process or
 * another, holds it. A lock is taken over only once it is older than its *holder's* stale period
 * (declared in `<file>.lock.json`), never by a taker's shorter one.
 */
export async function acquireSessionLock(path: string, options: SessionLockOptions): Promise<SessionLock> {
  const attempt = startAttempt(path, options);
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(path, attempt.lockOptions);
  } catch (err) {
    throw lockError(path, err);
  }
  return attempt.held(release, null);
}

/** A held lock that can also be released synchronously (callers without an event-loop turn). */
export interface SyncSessionLock extends SessionLock {
  releaseSync(): void;
}

/**
 * `acquireSessionLock` for synchronous callers (pi's sync factories): the same directory, holder
 * declaration, stale periods, heartbeat and `assertHeld`, taken with proper-lockfile's `lockSync`.
 */
export function acquireSessionLockSync(path: string, options: SessionLockOptions): SyncSessionLock {
  const attempt = startAttempt(path, options);
  let release: () => void;
  try {
    release = lockfile.lockSync(path, attempt.lockOptions);
  } catch (err) {
    throw lockError(path, err);
  }
  const lock = attempt.held(async () => release(), release);
  return lock as SyncSessionLock;
}

function lockError(path: string, err: unknown): TranscriptStoreError {
  if (errnoCode(err) === "ELOCKED") {
    return new TranscriptStoreError("SESSION_LOCKED", `Session is locked by another writer: ${path}`, { path, cause: err });
  }
  return new TranscriptStoreError("PERSISTENCE_FAILED", `Could not lock session ${path}: ${(err as Error).message}`, { path, cause: err });
}

/** Everything about one acquisition that does not depend on how the directory is taken. */
function startAttempt(path: string, options: SessionLockOptions) {
  const stale = Math.max(MIN_STALE_MS, options.staleMs ?? DEFAULT_LOCK_STALE_MS);
  const holderStale = holderStaleMsOf(path) ?? stale;
  const heartbeat = new LockHeartbeat(`${resolve(path)}.lock`);
  const timing = heartbeatTiming(stale, holderStale);
  let released = false;
  let tracked: { readonly path: string } | null = null;
  const untrack = () => {
    if (tracked !== null) heldDeclarations.delete(tracked);
  };
  const compromise = (err: Error) => {
    if (released) return;
    released = true;
    untrack();
    options.onCompromised(err);
  };
  const lockOptions = {
    stale: holderStale,
    update: timing.updateMs,
    retries: 0,
    realpath: false,
    fs: heartbeat.fs(),
    onCompromised: compromise,
  };
  const held = (release: () => Promise<void>, releaseSync: (() => void) | null): SessionLock & { releaseSync?: () => void } => {
    heartbeat.acquired();
    writeDeclaration(path, { pid: process.pid, staleMs: stale });
    const token = trackDeclaration(path);
    tracked = token;
    // proper-lockfile's exit handler (normal exit, SIGINT, SIGTERM, SIGHUP) removes the directory.
    heartbeat.onRemoveSync = () => removeOwnDeclaration(token);
    // Made once, not per append: the check runs before every append.
    const lost = (why: string): never => {
      const err = new TranscriptStoreError("SESSION_LOCKED", `Session lock lost (${why}); another writer may hold it: ${path}`, {
        path,
      });
      compromise(err);
      throw err;
    };
    const trustedMs = timing.trustedMs;
    const lock: SessionLock & { releaseSync?: () => void } = {
      path,
      assertHeld() {
        if (released) lost("released");
        if (Date.now() - heartbeat.refreshedAt < trustedMs) return;
        if (!heartbeat.refreshIfOurs()) lost("taken over or removed");
      },
      async release() {
        if (released) return;
        released = true;
        untrack();
        removeDeclaration(path);
        try {
          await release();
        } catch {
          // Already released or compromised: nothing left to free.
        }
      },
    };
    if (releaseSync !== null) {
      lock.releaseSync = () => {
        if (released) return;
        released = true;
        untrack();
        removeDeclaration(path);
        try {
          releaseSync();
        } catch {
          // Already released or compromised: nothing left to free.
        }
      };
    }
    return lock;
  };
  return { lockOptions, held };
}
