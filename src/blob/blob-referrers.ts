import { constants } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { FILE_MODE, io, writeFileAtomic, writeFully } from "../io.ts";
import { openWithRelief } from "../session/append-handles.ts";

/**
 * The places whose files may reference a blob directory, kept in the blob directory itself
 * (`<blobsDir>/.referrers.jsonl`, one JSON object per line). Whatever writes a ref into a blob
 * directory registers the place first, so gc marks every place, wherever a session lives.
 *
 * - `tree`: a sessions root; every `*.jsonl` / `*.bak` below it, at any depth.
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
 * this process registered it before and the registry is unchanged (inode and size: forgetting a
 * place replaces the file, another registration grows it).
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
    let fd: number | undefined;
    try {
      io.mkdirSync(blobsDir, { recursive: true, mode: 0o700 });
      const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
      fd = openWithRelief(() => io.openSync(file, flags, FILE_MODE));
      writeFully(fd, Buffer.from(`${JSON.stringify(referrer)}\n`));
      io.fsyncSync(fd);
    } catch (err) {
      throw new TranscriptStoreError(
        "PERSISTENCE_FAILED",
        `Cannot register ${referrer.path} with the blob store: ${(err as Error).message}`,
        {
          path: file,
          cause: err,
        },
      );
    } finally {
      if (fd !== undefined) io.closeSync(fd);
    }
  }
  const now = identityOf(file);
  if (now === null) return;
  const entry = known !== undefined && known.identity === now ? known : { identity: now, keys: new Set<string>() };
  for (const r of current) entry.keys.add(`${r.kind}\0${r.path}`);
  entry.keys.add(key);
  registered.set(blobsDir, entry);
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

/** Removes every registration of `paths` (resolved); returns the referrers removed. */
export function forgetReferrers(blobsDir: string, paths: readonly string[]): Referrer[] {
  const drop = new Set(paths.map((p) => resolve(p)));
  const current = readReferrers(blobsDir) ?? [];
  const removed = current.filter((r) => drop.has(r.path));
  if (removed.length === 0) return [];
  const kept = current.filter((r) => !drop.has(r.path));
  writeFileAtomic(referrersPathOf(blobsDir), (emit) => emit(Buffer.from(kept.map((r) => `${JSON.stringify(r)}\n`).join(""))), {
    fsync: true,
  });
  return removed;
}

function identityOf(path: string): string | null {
  try {
    const st = io.lstatSync(path);
    return `${st.ino}:${st.size}`;
  } catch {
    return null;
  }
}
