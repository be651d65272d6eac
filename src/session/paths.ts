import { createHash } from "node:crypto";
import { readdirSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, isAbsolute, join, relative, resolve, win32 } from "node:path";
import { REFERRERS_FILE } from "../blob/blob-referrers.ts";
import { isTempFileName } from "../io.ts";

/** Store root: `$TRANSCRIPT_STORE_HOME`, else `~/.transcript-store`. */
export function defaultRoot(): string {
  const env = process.env.TRANSCRIPT_STORE_HOME;
  return env && env.length > 0 ? resolve(env) : join(homedir(), ".transcript-store");
}

export interface StoreDirs {
  sessionsDir: string;
  blobsDir: string;
}

/** The layout of docs/format.md: `<root>/sessions` and `<root>/blobs`, each overridable on its own. */
export function resolveStoreDirs(options: { root?: string; sessionsDir?: string; blobsDir?: string }): StoreDirs {
  const root = options.root !== undefined ? resolve(options.root) : defaultRoot();
  return {
    sessionsDir: options.sessionsDir !== undefined ? resolve(options.sessionsDir) : join(root, "sessions"),
    blobsDir: options.blobsDir !== undefined ? resolve(options.blobsDir) : join(root, "blobs"),
  };
}

function inside(parent: string, child: string): string | null {
  const rel = relative(parent, child);
  if (rel === "") return "";
  if (rel.startsWith("..") || isAbsolute(rel)) return null;
  return rel;
}

function flatten(path: string): string {
  return path.replace(/[/\\:]/g, "-");
}

/** How cwd buckets are named: omp's home-relative names or pi's `--<absolute path>--`. */
export type SessionLayout = "omp" | "pi";

export const SESSION_LAYOUTS: readonly SessionLayout[] = ["omp", "pi"];

/**
 * The cwd bucket directory name, encoded as omp or pi do so their trees can be read in place.
 * omp: inside home → `-<rel>`, inside the temp dir → `-tmp-<rel>`, elsewhere → `--<path>--`.
 * pi: always `--<absolute path without its first separator, / \\ : as ->--`, shortened only past
 * the file system's 255-byte limit (where pi itself cannot create the directory).
 */
export function cwdBucket(cwd: string, layout: SessionLayout = "omp"): string {
  if (isWindowsOnlyAbsolute(cwd)) {
    // Recorded on Windows: already absolute, never inside this machine's home or temp dir.
    if (layout === "pi") return piBucket(cwd);
    return fitName(`--${flatten(cwd.replace(/^[/\\]+/, ""))}--`);
  }
  const abs = resolve(cwd);
  if (layout === "pi") return piBucket(abs);
  const home = inside(resolve(homedir()), abs);
  if (home !== null) return fitName(home === "" ? "-" : `-${flatten(home)}`);
  const tmp = inside(resolve(tmpdir()), abs);
  if (tmp !== null) return fitName(`-tmp-${flatten(tmp)}`);
  return fitName(`--${flatten(abs.replace(/^[/\\]+/, ""))}--`);
}

/**
 * A cwd absolute on Windows (drive `C:\\`, `C:/`, or UNC) but not on this platform: a session
 * recorded there. Resolving it here would prefix this process's working directory.
 */
export function isWindowsOnlyAbsolute(cwd: string): boolean {
  return !isAbsolute(cwd) && win32.isAbsolute(cwd);
}

/** A recorded cwd made absolute: one recorded on Windows is kept as written (see above). */
export function resolveRecordedCwd(cwd: string): string {
  return isWindowsOnlyAbsolute(cwd) ? cwd : resolve(cwd);
}

/** pi 0.73.1's name for a cwd's directory: every name pi can create is kept exactly. */
function piBucket(abs: string): string {
  // A shortened name still ends in `--`, so the tree still reads as pi's.
  return fitName(`--${flatten(abs.replace(/^[/\\]/, ""))}--`, MAX_NAME_BYTES, "--");
}

export function isPiBucketName(name: string): boolean {
  return name.length >= 4 && name.startsWith("--") && name.endsWith("--");
}

/**
 * The layout an existing sessions tree uses, when its bucket names say so unambiguously: every
 * bucket `--…--` → pi (pi names no other way); any `-…` bucket not ending `--` (and every bucket
 * starting `-`) → omp. An empty or absent tree, or names neither writes, → null.
 */
export function detectLayout(sessionsDir: string): SessionLayout | null {
  let names: string[];
  try {
    names = readdirSync(sessionsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && !d.name.startsWith("."))
      .map((d) => d.name);
  } catch {
    return null;
  }
  if (names.length === 0) return null;
  if (names.every(isPiBucketName)) return "pi";
  if (names.every((n) => n.startsWith("-"))) return "omp";
  return null;
}

/** Longest omp-layout bucket name in bytes; file systems cap a name at 255. */
const MAX_BUCKET_BYTES = 200;
/** The file systems' cap on one name. */
const MAX_NAME_BYTES = 255;

/** Keeps a bucket name within `limit`: a long one keeps its start plus a hash of the whole. */
function fitName(bucket: string, limit: number = MAX_BUCKET_BYTES, tail = ""): string {
  if (Buffer.byteLength(bucket) <= limit) return bucket;
  const hash = createHash("sha256").update(bucket).digest("hex").slice(0, 16);
  const budget = limit - 20 - tail.length;
  let head = bucket.slice(0, budget);
  while (Buffer.byteLength(head) > budget) head = head.slice(0, -1);
  return `${head}--${hash}${tail}`;
}

/**
 * The one file-safe form of an id (or any name from a transcript) inside a path component: every
 * character but `A-Z a-z 0-9 -` becomes `_` (no `/`, `..`, NUL or dot name can survive). Lossy on
 * purpose: two ids of one form meet at one name, which the writer finds (exclusive create) and
 * refuses as a conflict before writing.
 */
export function fileSafeId(id: string): string {
  return id.replace(/[^A-Za-z0-9-]/g, "_");
}

/** `<ISO time with : and . as ->_<file-safe id>.jsonl` */
export function sessionFileName(created: Date, sessionId: string): string {
  return `${created.toISOString().replace(/[:.]/g, "-")}_${fileSafeId(sessionId)}.jsonl`;
}

/** The artifacts directory of a session file: its path without `.jsonl`. */
export function artifactsDirOf(sessionFile: string): string {
  return sessionFile.endsWith(".jsonl") ? sessionFile.slice(0, -".jsonl".length) : `${sessionFile}.artifacts`;
}

/** `<stem>.quarantine.jsonl` beside the session. */
export function quarantinePathOf(sessionFile: string): string {
  return `${artifactsDirOf(sessionFile)}.quarantine.jsonl`;
}

/**
 * True for our files that are not sessions though they may sit among them: quarantines, backups,
 * our temp files (`isTempFileName`) and the blob store's registry of referrers (`.referrers.jsonl`,
 * met when a whole store root is walked). A dot name is not auxiliary by itself: `.session.jsonl`
 * is a session.
 */
export function isAuxiliarySessionName(name: string): boolean {
  return name.endsWith(".quarantine.jsonl") || name.endsWith(".bak") || name === REFERRERS_FILE || isTempFileName(name);
}

/** The id part of `<timestamp>_<id>.jsonl`, or null. */
export function idFromFileName(path: string): string | null {
  const name = basename(path);
  const m = /_([0-9a-fA-F-]{8,})\.jsonl$/.exec(name);
  return m ? m[1]! : null;
}
