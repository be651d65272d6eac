import { hostname } from "node:os";
import { join } from "node:path";
import { errnoCode } from "../errors.ts";
import { io } from "../io.ts";

/*
 * Spool directories name their owner, `.unbundle-<pid>@<host>-<random>.tmp`, so a killed process's
 * spool (a copy of everything it read) is reclaimed by the next unbundle, as the PostgreSQL working
 * directories are: a directory whose owner is a process of this host that no longer runs is
 * removed; those of live processes, of other hosts (a shared root) and names not made here stay.
 * Spools of an older version, `.unbundle-<pid>-<random>.tmp`, name no host: judged as this host's.
 */

const OWNED = /^\.unbundle-(\d{1,10})(?:@([A-Za-z0-9._-]{1,64}))?-[0-9a-f]{12}\.tmp$/;

/** This host as it appears in a spool name. */
export function hostTag(): string {
  return (
    hostname()
      .replace(/[^A-Za-z0-9.-]/g, "_")
      .slice(0, 64) || "host"
  );
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

/** True when `name` (in some parent) is a spool directory left by a dead process of this host. */
export function isDeadSpool(name: string): boolean {
  const m = OWNED.exec(name);
  if (m === null) return false;
  const pid = Number(m[1]);
  return (m[2] === undefined || m[2] === hostTag()) && pid !== process.pid && !isAlive(pid);
}

/** Removes the dead processes' spools under `parent`; returns how many. */
export function reclaimDeadSpools(parent: string): number {
  let names: string[];
  try {
    names = io.readdirSync(parent) as string[];
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names.filter(isDeadSpool)) {
    try {
      io.rmSync(join(parent, name), { recursive: true, force: true });
      removed++;
    } catch {
      // another process reclaiming at the same moment: left for later
    }
  }
  return removed;
}
