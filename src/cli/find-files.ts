import { basename, resolve } from "node:path";
import fg from "fast-glob";
import { errnoCode } from "../errors.ts";
import { io } from "../io.ts";
import { isAuxiliarySessionName } from "../session/paths.ts";
import { UsageError } from "./context.ts";

/**
 * Session files under the given paths (files as given, directories searched at any depth), sorted.
 * Dot names and dot-directories are searched too (`.session.jsonl`, `sessions/.archive/`): only
 * what `isAuxiliarySessionName` names (quarantines, backups, our temp files) is left out.
 */
export async function findSessionFiles(paths: readonly string[], cwd: string): Promise<string[]> {
  const out = new Set<string>();
  for (const p of paths) {
    const abs = resolve(cwd, p);
    let stat;
    try {
      stat = io.statSync(abs);
    } catch (err) {
      if (errnoCode(err) === "ENOENT") throw new UsageError(`no such file or directory: ${p}`);
      throw err;
    }
    if (stat.isFile()) {
      out.add(abs);
      continue;
    }
    const found = await fg("**/*.jsonl", { cwd: abs, absolute: true, onlyFiles: true, dot: true, followSymbolicLinks: false });
    for (const f of found) if (!isAuxiliarySessionName(basename(f))) out.add(f);
  }
  return [...out].sort();
}

/** Every directory directly under the roots (session buckets), for orphan checks. */
export function bucketDirs(roots: readonly string[]): string[] {
  const out: string[] = [];
  for (const root of roots) {
    try {
      for (const e of io.readdirSync(root, { withFileTypes: true }))
        if (e.isDirectory() && !e.name.startsWith(".")) out.push(resolve(root, e.name));
    } catch {
      // a root that does not exist has no buckets
    }
  }
  return out;
}
