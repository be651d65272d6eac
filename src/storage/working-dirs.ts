import { hostname, tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { DIR_MODE, io } from "../io.ts";
import { mkdtempSync } from "node:fs";

/**
 * Where a process keeps working copies for a backend that holds no files of its own (PostgreSQL's
 * artifacts; any row-shaped backend's): one root per purpose and user in the OS temp dir,
 * `transcript-store-<purpose>-<uid>/`, holding one directory per open session named after its
 * owner, `<pid>@<host>-<random>/`. A killed process cannot remove its own, so every process that
 * makes one first removes those whose owner is a dead process on this host (`reclaimDead`); a
 * normal exit removes the process's own.
 */

const OWNER = /^(\d{1,10})@([A-Za-z0-9._-]{1,64})-[A-Za-z0-9]{6}$/;

/** This host as it appears in a directory name. */
function hostTag(): string {
  return (
    hostname()
      .replace(/[^A-Za-z0-9.-]/g, "_")
      .slice(0, 64) || "host"
  );
}

function userTag(): string {
  const uid = process.getuid?.();
  return uid !== undefined ? String(uid) : userInfo().username.replace(/[^A-Za-z0-9._-]/g, "_");
}

/** Creates the root (0700) or checks the one there: a directory of this user, not a symlink, writable by nobody else. */
function prepareRoot(root: string, what: string): void {
  try {
    io.mkdirSync(root, { mode: DIR_MODE });
  } catch (err) {
    if (errnoCode(err) !== "EEXIST") throw unusable(root, what, (err as Error).message, err);
  }
  const st = io.lstatSync(root);
  const uid = process.getuid?.();
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0) {
    throw unusable(root, what, "it is not a private directory of this user (a symlink, another owner, or open to others)");
  }
}

function unusable(root: string, what: string, why: string, cause?: unknown): TranscriptStoreError {
  return new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot keep ${what} under ${root}: ${why}`, { path: root, cause });
}

/** True unless `pid` is certainly gone (ESRCH); a process of another user (EPERM) is alive. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) !== "ESRCH";
  }
}

/**
 * Removes the working directories whose owner was a process of this host that no longer runs
 * (killed before it could clean up). Directories of live processes, of other hosts (a shared
 * temp dir) and names not made here are left alone. A pid reused by a new process only delays
 * its directory's removal. Returns how many were removed.
 */
export function reclaimDeadWorkingDirs(root: string): number {
  let names: string[];
  try {
    names = io.readdirSync(root);
  } catch {
    return 0; // no root yet, or unreadable: nothing this process may judge
  }
  const host = hostTag();
  let removed = 0;
  for (const name of names) {
    const m = OWNER.exec(name);
    if (m === null || m[2] !== host || Number(m[1]) === process.pid || isAlive(Number(m[1]))) continue;
    try {
      io.rmSync(join(root, name), { recursive: true, force: true });
      removed++;
    } catch {
      // another process reclaiming at the same moment, or not ours to remove: left for later
    }
  }
  return removed;
}

const live = new Set<string>();
let exitHook = false;

/** One purpose's working directories: `purpose` names the root, `what` the copies in messages. */
export class WorkingDirs {
  constructor(
    readonly purpose: string,
    readonly what: string,
  ) {}

  /** The root of this user's working directories for this purpose. */
  root(): string {
    return join(tmpdir(), `transcript-store-${this.purpose}-${userTag()}`);
  }

  /** A new working directory of this process (after reclaiming those of dead ones). */
  make(): string {
    return makeWorkingDir(this.root(), this.what);
  }
}

function makeWorkingDir(root: string, what: string): string {
  prepareRoot(root, what);
  reclaimDeadWorkingDirs(root);
  let dir: string;
  try {
    dir = mkdtempSync(join(root, `${process.pid}@${hostTag()}-`));
  } catch (err) {
    throw unusable(root, what, (err as Error).message, err);
  }
  live.add(dir);
  if (!exitHook) {
    exitHook = true;
    // a normal exit that skipped close() leaves nothing behind; a kill is what reclaiming is for
    process.once("exit", () => {
      for (const d of live) removeWorkingDir(d);
    });
  }
  return dir;
}

/** Removes a working directory and everything in it. */
export function removeWorkingDir(dir: string): void {
  live.delete(dir);
  try {
    io.rmSync(dir, { recursive: true, force: true });
  } catch {
    // unremovable now (permissions changed): a later process reclaims it once this one is gone
  }
}
