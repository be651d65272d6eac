import { constants } from "node:fs";
import { basename, dirname, join } from "node:path";
import { SessionAccountant, type SessionAccount } from "../accounting/session-account.ts";
import type { SessionSpace } from "../accounting/du-report.ts";
import { isBlobHash } from "../blob/blob-ref.ts";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { LineSplitter } from "../format/line-splitter.ts";
import { io } from "../io.ts";
import { artifactsDirOf, quarantinePathOf } from "../session/paths.ts";
import { DEFAULT_CHUNK_SIZE, scanLimits } from "../session/session-file-reader.ts";
import { blobRefsOfFile } from "./blob-refs.ts";

function unreadable(path: string, err: unknown): TranscriptStoreError {
  return new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot read ${path}: ${(err as Error).message}`, { path, cause: err });
}

/**
 * Streams a session file through a `SessionAccountant`, 1 MiB at a time: memory holds one line
 * (a line past the string limit only its first 64 KiB, counted `oversized`). `PERSISTENCE_FAILED`
 * when it cannot be read; a file that vanished is null.
 */
export function accountSessionFile(path: string): SessionAccount | null {
  let fd: number;
  try {
    fd = io.openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw unreadable(path, err);
  }
  const accountant = new SessionAccountant();
  const splitter = new LineSplitter((line) => accountant.addLine(line), {
    maxLineBytes: scanLimits.maxLineBytes,
    keepBytes: scanLimits.keepBytes,
    reuseBuffer: true,
  });
  const buf = Buffer.allocUnsafe(DEFAULT_CHUNK_SIZE);
  try {
    if (!io.fstatSync(fd).isFile()) return null;
    for (let n = io.readSync(fd, buf, 0, buf.length, null); n > 0; n = io.readSync(fd, buf, 0, buf.length, null))
      splitter.push(buf.subarray(0, n));
    splitter.end();
  } catch (err) {
    throw unreadable(path, err);
  } finally {
    io.closeSync(fd);
  }
  return accountant.result();
}

/** Bytes of a regular file (0 when absent; links are not followed). */
function fileBytes(path: string): number {
  try {
    const st = io.lstatSync(path);
    return st.isFile() ? st.size : 0;
  } catch (err) {
    if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") return 0;
    throw unreadable(path, err);
  }
}

/** Bytes of the regular files below `dir` (links not followed; 0 when absent). */
export function treeBytes(dir: string, depth = 0): number {
  let names: string[];
  try {
    if (!io.lstatSync(dir).isDirectory()) return 0;
    names = io.readdirSync(dir);
  } catch (err) {
    if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") return 0;
    throw unreadable(dir, err);
  }
  let n = 0;
  for (const name of names) {
    const path = join(dir, name);
    const st = io.lstatSync(path, { throwIfNoEntry: false });
    if (st === undefined) continue;
    if (st.isFile()) n += st.size;
    else if (st.isDirectory() && depth < 64) n += treeBytes(path, depth + 1);
  }
  return n;
}

/** The backups `migrate --backup` wrote for a session file: `<file>.bak`, `<file>.<n>.bak`. */
export function backupPathsOf(path: string, names: readonly string[]): string[] {
  const name = basename(path);
  return names
    .filter((n) => n === `${name}.bak` || (n.startsWith(`${name}.`) && /^\d+\.bak$/.test(n.slice(name.length + 1))))
    .map((n) => join(dirname(path), n));
}

/**
 * A session file's space: the file by kind (its account), its artifacts directory, quarantine file
 * and backups; the blobs referenced by any of them (as gc counts them). `names`: its directory's listing.
 */
export function fileSessionSpace(
  path: string,
  account: SessionAccount,
  fallback: { id: string; cwd: string },
  names: readonly string[],
): SessionSpace {
  const refs = new Set(account.blobRefs);
  const quarantine = quarantinePathOf(path);
  const quarantineBytes = fileBytes(quarantine);
  if (quarantineBytes > 0) blobRefsOfFile(quarantine, refs);
  let backups = 0;
  for (const bak of backupPathsOf(path, names)) {
    backups += fileBytes(bak);
    blobRefsOfFile(bak, refs);
  }
  return {
    id: account.sessionId ?? fallback.id,
    cwd: account.cwd ?? fallback.cwd,
    path,
    kinds: account.kinds,
    blobRefs: refs,
    artifacts: treeBytes(artifactsDirOf(path)),
    quarantine: quarantineBytes,
    backups,
  };
}

/** Every blob in a blob directory and its size. */
export function fileBlobSizes(blobsDir: string): Map<string, number> {
  const sizes = new Map<string, number>();
  let names: string[];
  try {
    names = io.readdirSync(blobsDir);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return sizes;
    throw unreadable(blobsDir, err);
  }
  for (const name of names) {
    if (!isBlobHash(name)) continue;
    const st = io.lstatSync(join(blobsDir, name), { throwIfNoEntry: false });
    if (st?.isFile()) sizes.set(name, st.size);
  }
  return sizes;
}
