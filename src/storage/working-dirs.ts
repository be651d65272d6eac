import { mkdtempSync } from "node:fs";
import { hostname, tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { DIR_MODE, io } from "../io.ts";

/**
 * Where a process keeps files that must not outlive it (PostgreSQL sessions' artifact working
 * copies, incognito sessions' artifacts and agent outputs): one root per kind and user in the OS
 * temp dir, `transcript-store-<kind>-<uid>/`, holding one directory per session named after its
 * owner, `<pid>@<host>-<random>/`. A normal exit (also one by an uncaught error) removes the
 * process's own, `close()` removes a session's at once; a killed process cannot, so every process
 * that makes one first removes those whose owner is a dead process on this host.
 */
export interface WorkingDirs {
  /** The root of this user's directories of this kind. */
  root(): string;
  /** A new directory of this process (after reclaiming those of dead ones). */
  make(): string;
  /** Removes the directories under `root` whose owner is a dead process of this host; how many. */
  reclaimDead(root?: string): number;
}

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

/** True unless `pid` is certainly gone (ESRCH); a process of another user (EPERM) is alive. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) !== "ESRCH";
  }
}

const live = new Set<string>();
let exitHook = false;

/** The working directories of one kind (`kind` names the root; `what` the errors). */
export function workingDirs(kind: string, what: string): WorkingDirs {
  const unusable = (root: string, why: string, cause?: unknown) =>
    new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot keep ${what} under ${root}: ${why}`, { path: root, cause });

  /** Creates the root (0700) or checks the one there: a directory of this user, not a symlink, writable by nobody else. */
  const prepareRoot = (root: string): void => {
    try {
      io.mkdirSync(root, { mode: DIR_MODE });
    } catch (err) {
      if (errnoCode(err) !== "EEXIST") throw unusable(root, (err as Error).message, err);
    }
    const st = io.lstatSync(root);
    const uid = process.getuid?.();
    if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0) {
      throw unusable(root, "it is not a private directory of this user (a symlink, another owner, or open to others)");
    }
  };

  const self: WorkingDirs = {
    root: () => join(tmpdir(), `transcript-store-${kind}-${userTag()}`),
    reclaimDead(root = self.root()) {
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
        // other hosts (a shared temp dir), live owners and names not made here are left alone; a reused pid only delays
        if (m === null || m[2] !== host || Number(m[1]) === process.pid || isAlive(Number(m[1]))) continue;
        try {
          io.rmSync(join(root, name), { recursive: true, force: true });
          removed++;
        } catch {
          // another process reclaiming at the same moment, or not ours to remove: left for later
        }
      }
      return removed;
    },
    make() {
      const root = self.root();
      prepareRoot(root);
      self.reclaimDead(root);
      let dir: string;
      try {
        dir = mkdtempSync(join(root, `${process.pid}@${hostTag()}-`));
      } catch (err) {
        throw unusable(root, (err as Error).message, err);
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
    },
  };
  return self;
}

/** Removes a working directory (of any kind) and everything in it. */
export function removeWorkingDir(dir: string): void {
  live.delete(dir);
  try {
    io.rmSync(dir, { recursive: true, force: true });
  } catch {
    // unremovable now (permissions changed): a later process reclaims it once this one is gone
  }
}
