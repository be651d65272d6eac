import { constants } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { ensureDir, FILE_MODE, fsyncDir, io, writeFileAtomic, writeFully } from "../io.ts";
import { openWithRelief } from "../session/append-handles.ts";
import { lockBlobStoreSync } from "./gc-lock.ts";

/**
 * The places whose files may reference a blob directory, kept in the blob directory itself
 * (`<blobsDir>/.referrers.jsonl`, one JSON object per line). Whatever writes a ref into a blob
 * directory registers the place first, so gc marks every place, wherever a session lives.
 *
 * - `tree`: a sessions root; every file below it, at any depth, whatever its name.
 * - `dir`: the directory of a session opened by explicit path; its own files only (not below).
 */
export interface Referrer {
  kind: "tree" | "dir";
  path: string;
}

export const REFERRERS_FILE = ".referrers.jsonl";

export function referrersPathOf(blobsDir: string): string {
  return join(blobsDir, REFERRERS_FILE);
}

/** The place to register for a session file: its sessions root, or its own directory. */
export function referrerFor(sessionFile: string, sessionsDir: string): Referrer {
  const file = resolve(sessionFile);
  const root = resolve(sessionsDir);
  return isInside(file, root) ? { kind: "tree", path: root } : { kind: "dir", path: dirname(file) };
}

/** True when `path` is `root` or below it. */
export function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !rel.startsWith(sep) && rel !== "..");
}

/** Registered referrers; an absent file is an empty registry. Unreadable → PERSISTENCE_FAILED. */
export function readReferrers(blobsDir: string): Referrer[] | null {
  let text: string;
  try {
    const fd = openWithRelief(() => io.openSync(referrersPathOf(blobsDir), constants.O_RDONLY | constants.O_NOFOLLOW));
    try {
      text = io.readFileSync(fd, "utf8") as string;
    } finally {
      io.closeSync(fd);
    }
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot read the blob store's referrers: ${(err as Error).message}`, {
      path: referrersPathOf(blobsDir),
      cause: err,
    });
  }
  return parseReferrers(text);
}

/** The registry's places, deduplicated; torn and foreign lines are skipped. */
function parseReferrers(text: string): Referrer[] {
  const seen = new Map<string, Referrer>();
  for (const line of text.split("\n")) {
    if (line.trim().length === 0) continue;
    let value: Partial<Referrer>;
    try {
      value = JSON.parse(line) as Partial<Referrer>;
    } catch {
      continue; // a torn line of a crashed registration: that writer registered again or never wrote
    }
    if ((value.kind !== "tree" && value.kind !== "dir") || typeof value.path !== "string") continue;
    seen.set(`${value.kind}\0${value.path}`, { kind: value.kind, path: value.path });
  }
  return [...seen.values()];
}

/** Per process: places known to be registered, by blob dir, valid while the file's identity holds. */
const registered = new Map<string, { identity: string; keys: Set<string> }>();

/**
 * Registers `referrer` with the blob directory unless it is already there. Costs one stat when
 * this process registered it before and the registry is unchanged (inode, size and mtime:
 * forgetting a place replaces the file, another registration grows it).
 * Throws `PERSISTENCE_FAILED` when the registry cannot be written: a ref must not be written
 * into a store that would not know where it lives.
 */
export function registerReferrer(blobsDir: string, referrer: Referrer): void {
  const file = referrersPathOf(blobsDir);
  const key = `${referrer.kind}\0${referrer.path}`;
  const known = registered.get(blobsDir);
  const identity = identityOf(file);
  if (known !== undefined && identity !== null && known.identity === identity && known.keys.has(key)) return;
  const current = readReferrers(blobsDir) ?? [];
  if (!current.some((r) => r.kind === referrer.kind && r.path === referrer.path)) {
    try {
      appendRegistration(blobsDir, Buffer.from(`${JSON.stringify(referrer)}\n`));
    } catch (err) {
      throw new TranscriptStoreError(
        "PERSISTENCE_FAILED",
        `Cannot register ${referrer.path} with the blob store: ${(err as Error).message}`,
        {
          path: file,
          cause: err,
        },
      );
    }
  }
  const now = identityOf(file);
  if (now === null) return;
  const entry = known !== undefined && known.identity === now ? known : { identity: now, keys: new Set<string>() };
  for (const r of current) entry.keys.add(`${r.kind}\0${r.path}`);
  entry.keys.add(key);
  registered.set(blobsDir, entry);
}

/** Attempts before a registration that keeps landing in a replaced registry gives up. */
const MAX_REGISTER_ATTEMPTS = 100;

/**
 * Appends `line` to the registry, fsynced (the directory too when the registry or the blob
 * directory is new). A forget replaces the registry by renaming a new file over it and then
 * copies over what was appended to the old one meanwhile; a line appended to the old file after
 * that copy would be lost, so once written, the line's file must still be the one under the name,
 * else the line is appended again, to the new file.
 */
function appendRegistration(blobsDir: string, line: Buffer): void {
  const file = referrersPathOf(blobsDir);
  ensureDir(blobsDir, true);
  for (let attempt = 0; attempt < MAX_REGISTER_ATTEMPTS; attempt++) {
    const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
    const fd = openWithRelief(() => io.openSync(file, flags, FILE_MODE));
    try {
      writeFully(fd, line);
      io.fsyncSync(fd);
      const written = io.fstatSync(fd);
      if (written.size === line.length) fsyncDir(blobsDir); // this append may have created the file
      const named = io.lstatSync(file, { throwIfNoEntry: false });
      if (named !== undefined && named.ino === written.ino && named.dev === written.dev) return;
    } finally {
      io.closeSync(fd);
    }
  }
  throw Object.assign(new Error(`the registry was replaced ${MAX_REGISTER_ATTEMPTS} times while registering`), { code: "EAGAIN" });
}

/** True when `referrer` is in the blob directory's registry (one stat when this process saw it there). */
export function isRegistered(blobsDir: string, referrer: Referrer): boolean {
  const key = `${referrer.kind}\0${referrer.path}`;
  const known = registered.get(blobsDir);
  const identity = identityOf(referrersPathOf(blobsDir));
  if (identity === null) return false;
  if (known !== undefined && known.identity === identity && known.keys.has(key)) return true;
  return (readReferrers(blobsDir) ?? []).some((r) => r.kind === referrer.kind && r.path === referrer.path);
}

/**
 * Removes every registration of `paths` (resolved); returns the referrers removed. Holds the blob
 * store's gc lock (`STORE_BUSY` while a gc or another forget runs), so no gc reads the registry
 * half rewritten. Registrations other processes append meanwhile are kept: the old file stays
 * open while the new one is renamed over it, what was appended to the old one by then is copied
 * over, and a registrant whose line landed in the old file after that appends it again
 * (`appendRegistration`). A place registered again while it is being forgotten stays registered.
 */
export function forgetReferrers(blobsDir: string, paths: readonly string[]): Referrer[] {
  const drop = new Set(paths.map((p) => resolve(p)));
  if (readReferrers(blobsDir) === null) return [];
  const release = lockBlobStoreSync(blobsDir);
  try {
    return forgetLocked(blobsDir, drop);
  } finally {
    release();
  }
}

function forgetLocked(blobsDir: string, drop: ReadonlySet<string>): Referrer[] {
  const file = referrersPathOf(blobsDir);
  let fd: number;
  try {
    fd = openWithRelief(() => io.openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW));
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return [];
    throw registryError(file, err);
  }
  try {
    const all = readFrom(fd, 0);
    // Up to the last newline: a line being appended right now is read whole with the tail below.
    const head = all.subarray(0, all.lastIndexOf(0x0a) + 1);
    const current = parseReferrers(head.toString("utf8"));
    const removed = current.filter((r) => drop.has(r.path));
    if (removed.length === 0) return [];
    const kept = current.filter((r) => !drop.has(r.path));
    writeFileAtomic(file, Buffer.from(kept.map((r) => `${JSON.stringify(r)}\n`).join("")), { fsync: true });
    // Appended to the old file between the read above and the rename: copied over, as written.
    const tail = readFrom(fd, head.length);
    if (tail.length > 0) appendRegistration(blobsDir, wholeLines(tail));
    return removed;
  } catch (err) {
    throw registryError(file, err);
  } finally {
    io.closeSync(fd);
  }
}

function registryError(file: string, err: unknown): TranscriptStoreError {
  if (err instanceof TranscriptStoreError) return err;
  return new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot rewrite the blob store's referrers: ${(err as Error).message}`, {
    path: file,
    cause: err,
  });
}

/** The rest of an open file from `offset`. */
function readFrom(fd: number, offset: number): Buffer {
  const size = io.fstatSync(fd).size;
  const out = Buffer.alloc(Math.max(0, size - offset));
  let at = 0;
  while (at < out.length) {
    const n = io.readSync(fd, out, at, out.length - at, offset + at);
    if (n === 0) break;
    at += n;
  }
  return out.subarray(0, at);
}

/** `bytes` ending in a newline (a torn last line stays torn but cannot glue to the next one). */
function wholeLines(bytes: Buffer): Buffer {
  return bytes[bytes.length - 1] === 0x0a ? bytes : Buffer.concat([bytes, Buffer.from("\n")]);
}

function identityOf(path: string): string | null {
  try {
    const st = io.lstatSync(path);
    // With the mtime: a forget frees the old file's inode, and a later registry may reuse it.
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return null;
  }
}
