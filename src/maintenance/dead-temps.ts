import { dirname, join } from "node:path";
import { errnoCode } from "../errors.ts";
import { io, isTempFileName } from "../io.ts";
import { artifactsDirOf } from "../session/paths.ts";

/*
 * Temp files a killed rewrite left beside a session: `.<name>.<pid>.<random>.tmp` (io.ts
 * `tempPathFor`) in its artifacts directory (a reseal or scrub of one artifact) or beside the
 * session file (the rewrite of the file itself). Nothing else ever renames them into place, so the
 * next rewrite of the session removes them, holding the session's lock (no writer of this session
 * runs meanwhile) and only those whose process no longer runs.
 */

const TEMP = /^\..+\.(\d{1,10})\.[0-9a-f]{12}\.tmp$/;

/** True unless `pid` is certainly gone (ESRCH). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) !== "ESRCH";
  }
}

function reclaimIn(dir: string, only: (name: string) => boolean): number {
  let names: string[];
  try {
    names = io.readdirSync(dir) as string[];
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const m = TEMP.exec(name);
    if (m === null || !isTempFileName(name) || !only(name)) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || isAlive(pid)) continue;
    io.rmSync(join(dir, name), { force: true });
    removed++;
  }
  return removed;
}

/**
 * Removes the dead processes' temp files of the session at `file` (the caller holds its lock): those
 * in its artifacts directory, and those of the session file's own name beside it. Returns how many.
 */
export function reclaimDeadSessionTemps(file: string): number {
  const own = `.${file.slice(dirname(file).length + 1)}.`;
  return reclaimIn(artifactsDirOf(file), () => true) + reclaimIn(dirname(file), (name) => name.startsWith(own));
}
