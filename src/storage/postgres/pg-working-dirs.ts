import { reclaimDeadWorkingDirs as reclaim, removeWorkingDir, WorkingDirs } from "../working-dirs.ts";

/**
 * The PostgreSQL backend's working directories (storage/working-dirs.ts): `transcript-store-pg-<uid>/`
 * in the OS temp dir, one directory per open session's artifacts, those of dead processes reclaimed.
 */
const dirs = new WorkingDirs("pg", "PostgreSQL artifacts");

/** The root of this user's working directories. */
export const workingDirsRoot = (): string => dirs.root();

/** Removes the working directories of dead processes of this host (storage/working-dirs.ts). */
export const reclaimDeadWorkingDirs = (root: string = dirs.root()): number => reclaim(root);

/** A new working directory of this process (after reclaiming those of dead ones). */
export const makeWorkingDir = (): string => dirs.make();

export { removeWorkingDir };
