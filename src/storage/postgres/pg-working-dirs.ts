import { removeWorkingDir, workingDirs } from "../working-dirs.ts";

/**
 * Where a process keeps the working copies of its open PostgreSQL sessions' artifacts:
 * `<tmp>/transcript-store-pg-<uid>/<pid>@<host>-<random>/` (working-dirs.ts: removed on close and
 * at exit, reclaimed from dead processes by the next one that makes one).
 */
const PG = workingDirs("pg", "PostgreSQL artifacts");

/** The root of this user's working directories. */
export function workingDirsRoot(): string {
  return PG.root();
}

/** Removes the working directories whose owner was a process of this host that no longer runs; how many. */
export function reclaimDeadWorkingDirs(root: string = workingDirsRoot()): number {
  return PG.reclaimDead(root);
}

/** A new working directory of this process (after reclaiming those of dead ones). */
export function makeWorkingDir(): string {
  return PG.make();
}

export { removeWorkingDir };
