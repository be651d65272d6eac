import { resolve } from "node:path";
import { io } from "../io.ts";

/**
 * The store directories a command line names that must exist for a command that reads the store.
 * Not `--blobs-dir`: a store whose sessions hold no image yet has none (gc requires it).
 */
const STORE_FLAGS = ["root", "sessions-dir"] as const;

/**
 * A directory the user typed (`--root`, `--sessions-dir`, and the command's own
 * `mustExist` flags) that does not exist is a usage error: a mistyped path would otherwise read as
 * an empty store (an empty table, a gc of nothing) and exit 0. Commands that create a store
 * (`createsStore`: import, migrate, fork, demo) may name a new one; with `--store` (a database)
 * the store flags are not used, so not checked. Returns the problem, or null.
 */
export function missingTypedDir(
  values: Record<string, unknown>,
  cwd: string,
  options: { createsStore?: boolean; database?: boolean; mustExist?: readonly string[] },
): string | null {
  const flags: string[] = options.createsStore || options.database ? [] : [...STORE_FLAGS];
  flags.push(...(options.mustExist ?? []));
  for (const flag of flags) {
    const given = values[flag];
    for (const path of Array.isArray(given) ? given : [given]) {
      if (typeof path !== "string") continue;
      const abs = resolve(cwd, path);
      const stat = io.statSync(abs, { throwIfNoEntry: false });
      if (stat === undefined) return `--${flag} ${abs}: no such directory`;
      if (!stat.isDirectory()) return `--${flag} ${abs}: not a directory`;
    }
  }
  return null;
}
