import { join } from "node:path";
import { errnoCode, type StoreWarning } from "../errors.ts";
import { copyFilePrivate, ensureDir, fsyncDir, io, syncFile } from "../io.ts";

export interface TreeCopyResult {
  linked: number;
  copied: number;
  failed: number;
}

/** Temp and in-flight files are copied, never linked: a writer may still change them. */
function isFinishedName(name: string): boolean {
  return !name.startsWith(".") && !name.endsWith(".tmp");
}

/**
 * Copies a directory tree for a fork: finished files are hard-linked (copied where links fail),
 * directories are created 0700, symlinks are never followed (skipped with a warning), and a file
 * that cannot be copied is a warning, not a failure. A missing source is an empty copy. With
 * `fsync`, copied bytes, every new name and every new directory are made durable.
 */
export function linkTree(
  src: string,
  dst: string,
  warn: (w: StoreWarning) => void,
  mode: "link" | "copy" = "link",
  fsync = false,
): TreeCopyResult {
  const result: TreeCopyResult = { linked: 0, copied: 0, failed: 0 };
  let entries;
  try {
    if (!io.lstatSync(src).isDirectory()) return result;
    entries = io.readdirSync(src, { withFileTypes: true });
  } catch (err) {
    if (errnoCode(err) !== "ENOENT") {
      result.failed++;
      warn({ code: "ARTIFACT_COPY_FAILED", message: `Cannot read artifacts directory: ${(err as Error).message}`, path: src });
    }
    return result;
  }
  ensureDir(dst, fsync);
  // Names from readdir hold no separator and are never "." or "..": each path is its directory's
  // normalized prefix plus the name (what path.join gives, without normalizing once per file).
  const fromPrefix = prefixOf(src);
  const toPrefix = prefixOf(dst);
  for (const entry of entries) {
    const from = fromPrefix + entry.name;
    const to = toPrefix + entry.name;
    if (entry.isSymbolicLink()) {
      result.failed++;
      warn({ code: "ARTIFACT_COPY_FAILED", message: "Symlink in artifacts directory not followed", path: from });
      continue;
    }
    if (entry.isDirectory()) {
      const sub = linkTree(from, to, warn, mode, fsync);
      result.linked += sub.linked;
      result.copied += sub.copied;
      result.failed += sub.failed;
      continue;
    }
    if (!entry.isFile()) continue;
    try {
      if (mode === "link" && isFinishedName(entry.name)) {
        try {
          io.linkSync(from, to);
          result.linked++;
          continue;
        } catch (err) {
          if (errnoCode(err) === "EEXIST") throw err;
          // EXDEV, EPERM, EMLINK…: fall back to a copy
        }
      }
      copyFilePrivate(from, to);
      if (fsync) syncFile(to);
      result.copied++;
    } catch (err) {
      result.failed++;
      warn({ code: "ARTIFACT_COPY_FAILED", message: `Artifact not copied: ${(err as Error).message}`, path: from });
    }
  }
  if (fsync) fsyncDir(dst);
  return result;
}

/** `dir` normalized, ending in one separator: `join(dir, name)` is this plus `name` for any name readdir gives. */
function prefixOf(dir: string): string {
  return join(dir, "x").slice(0, -1);
}

/** True when every file of `a` exists in `b` with the same bytes (used before deleting a cross-device source). */
export function sameTree(a: string, b: string): boolean {
  let entries;
  try {
    entries = io.readdirSync(a, { withFileTypes: true });
  } catch (err) {
    return errnoCode(err) === "ENOENT";
  }
  for (const entry of entries) {
    if (entry.isSymbolicLink()) continue;
    const from = join(a, entry.name);
    const to = join(b, entry.name);
    if (entry.isDirectory()) {
      if (!sameTree(from, to)) return false;
    } else if (entry.isFile()) {
      try {
        if (!io.readFileSync(from).equals(io.readFileSync(to))) return false;
      } catch {
        return false;
      }
    }
  }
  return true;
}
