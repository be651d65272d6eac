import type { Dirent } from "node:fs";
import { basename, join, resolve as resolvePath, sep } from "node:path";
import { errnoCode, SessionAmbiguousError, type StoreWarning, TranscriptStoreError, type WarningHandler } from "../errors.ts";
import { cwdOrPlaceholder } from "./recorded-cwd.ts";
import { cwdBucket, detectLayout, idFromFileName, isAuxiliarySessionName, resolveStoreDirs, type SessionLayout } from "./paths.ts";
import { readSessionListing, type SessionInfo } from "./session-info.ts";
import { moveCommitted, readMoveJournal } from "./move-journal.ts";
import { io } from "../io.ts";

export interface DiscoveryOptions {
  root?: string;
  sessionsDir?: string;
  /** More session roots to search (e.g. pi's and omp's trees), after `sessionsDir`. */
  roots?: string[];
  /** Bucket naming of `sessionsDir`. @default detected per root, else "omp" */
  layout?: SessionLayout;
  onWarning?: WarningHandler;
  /**
   * Whether a listing answers from the store's index (src/search/listing-reader.ts) when it is
   * fresh, checked file by file by stat: "auto" when an index file exists (none is created),
   * "create" building one when missing, "off" never. @default "auto"
   */
  listIndex?: ListIndexMode;
  /** The index file a listing uses. @default the one `openSessionIndex` uses for the same tree */
  indexPath?: string;
  /** Reads the listing infos of the files walked (each null is unlisted). @default each file read, see `sessionInfoOf` */
  readInfos?: ListingInfoReader;
}

/** See `DiscoveryOptions.listIndex`. */
export type ListIndexMode = "auto" | "create" | "off";

/**
 * The listing infos of `paths`, in their order (null: the file is not listed). `readOne` is the
 * listing without an index (one file read, or its in-process cache entry).
 */
export type ListingInfoReader = (paths: string[], readOne: (path: string) => SessionInfo | null) => Array<SessionInfo | null>;

function sessionRoots(options: DiscoveryOptions): string[] {
  const { sessionsDir } = resolveStoreDirs(options);
  return [sessionsDir, ...(options.roots ?? []).map((r) => resolvePath(r))];
}

/**
 * The entries of `dir`: what a listing walks. A missing directory has none; one that cannot be
 * read (no permission, EIO) has none either, but says so (`PERSISTENCE_FAILED` warning): its
 * sessions exist and are not listed, and `continueRecent` must not look as if there were none.
 */
function entriesOf(dir: string, onWarning?: WarningHandler): Dirent[] {
  try {
    return io.readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    const code = errnoCode(err);
    if (code !== "ENOENT" && code !== "ENOTDIR")
      onWarning?.({
        code: "PERSISTENCE_FAILED",
        message: `Cannot read ${dir}; its sessions are not listed: ${(err as Error).message}`,
        path: dir,
      });
    return [];
  }
}

/**
 * Session files directly inside `bucket` (plain files named `*.jsonl`, no symlinks, none that
 * `isAuxiliarySessionName` names; a dot name such as `.session.jsonl` is a session, as the CLI's
 * walk and gc take it), minus those an interrupted move has already committed elsewhere. One
 * `readdir`, no stat.
 */
function bucketFiles(bucket: string, out: string[], onWarning?: WarningHandler): void {
  let moving: Set<string> | null = null;
  const found: string[] = [];
  for (const entry of entriesOf(bucket, onWarning)) {
    const name = entry.name;
    if (!entry.isFile()) continue;
    if (name.endsWith(".jsonl")) {
      if (!isAuxiliarySessionName(name)) found.push(name);
    } else if (name.endsWith(".move.json")) {
      moving ??= new Set();
      moving.add(`${name.slice(0, -".move.json".length)}.jsonl`);
    }
  }
  // The bucket is a normalized path and names hold no separator: no path.join per file.
  const prefix = bucket.endsWith(sep) ? bucket : bucket + sep;
  for (const name of found) {
    const path = prefix + name;
    if (moving === null || !moving.has(name) || !movedAway(path)) out.push(path);
  }
}

/**
 * Session files of every bucket directory of `root` (symlinked buckets are not followed). A
 * dot-directory (`sessions/.archive/`) is no bucket (no cwd is named so): what it keeps is not
 * listed, though the CLI's walk (migrate, verify, stats) and gc read it.
 */
function rootFiles(root: string, out: string[], onWarning?: WarningHandler): void {
  for (const entry of entriesOf(root, onWarning)) {
    if (entry.isDirectory() && entry.name.charCodeAt(0) !== 0x2e) bucketFiles(join(root, entry.name), out, onWarning);
  }
}

function movedAway(path: string): boolean {
  const journal = readMoveJournal(path);
  return journal !== null && moveCommitted(path, journal);
}

/** Listing info of files seen before in this process, valid while their size and mtime hold. */
const infoCache = new Map<string, { size: number; mtimeMs: number; info: SessionInfo | null }>();
/** Entries kept in the cache before it starts over (≈ a few MB). */
const INFO_CACHE_LIMIT = 50_000;

/**
 * A file's listing info: from the in-process cache when the file's size and mtime are unchanged
 * (one stat instead of open + reads + parse), else read from its head and tail (open, fstat,
 * reads, close). Nothing is ever written next to the sessions: listing someone's pi tree leaves it
 * as it was.
 */
export function sessionInfoOf(path: string): SessionInfo | null {
  const hit = infoCache.get(path);
  if (hit !== undefined) {
    let stat;
    try {
      stat = io.statSync(path);
    } catch {
      infoCache.delete(path);
      return null;
    }
    if (hit.size === stat.size && hit.mtimeMs === stat.mtimeMs) return hit.info && { ...hit.info };
  }
  const read = readSessionListing(path);
  if (read === null) {
    infoCache.delete(path);
    return null;
  }
  if (infoCache.size >= INFO_CACHE_LIMIT) infoCache.clear();
  // Keyed by the stat taken before reading: a write racing the read invalidates the entry.
  infoCache.set(path, { size: read.stat.size, mtimeMs: read.stat.mtimeMs, info: read.info });
  // Callers get copies (the cached object is never handed out).
  return read.info && { ...read.info };
}

/** Forgets every cached listing entry (the next listing reads every file again). */
export function clearSessionInfoCache(): void {
  infoCache.clear();
}

function infos(paths: string[], options: DiscoveryOptions): SessionInfo[] {
  const { onWarning, readInfos } = options;
  const read = readInfos === undefined ? paths.map(sessionInfoOf) : readInfos(paths, sessionInfoOf);
  const out: SessionInfo[] = [];
  for (const [i, info] of read.entries()) {
    if (info !== null) out.push(info);
    else if (onWarning !== undefined) onWarning(unlisted(paths[i]!));
  }
  return out.sort((a, b) => b.modified.getTime() - a.modified.getTime() || b.created.getTime() - a.created.getTime());
}

/** Why a file is not listed: it cannot be opened (`PERSISTENCE_FAILED`), or has no session header. */
function unlisted(path: string): StoreWarning {
  try {
    io.closeSync(io.openSync(path, "r"));
  } catch (err) {
    if (errnoCode(err) !== "ENOENT")
      return { code: "PERSISTENCE_FAILED", message: `Skipped a file that cannot be read: ${(err as Error).message}`, path };
  }
  return { code: "BAD_HEADER", message: "Skipped a file without a valid session header", path };
}

/** Sessions recorded for `cwd` (its bucket, header `cwd` equal), newest first. */
export async function listSessions(cwd: string, options: DiscoveryOptions = {}): Promise<SessionInfo[]> {
  const abs = resolvePath(cwd);
  const paths: string[] = [];
  for (const [i, root] of sessionRoots(options).entries()) {
    // The main root uses the given layout; extra roots (pi's, omp's trees) name buckets their own way.
    const layout = (i === 0 ? options.layout : undefined) ?? detectLayout(root) ?? "omp";
    bucketFiles(join(root, cwdBucket(abs, layout)), paths, options.onWarning);
  }
  // a relative recorded cwd was filed under the placeholder (recorded-cwd.ts): it is listed there only
  return infos(paths, options).filter((info) => info.cwd === "" || cwdOrPlaceholder(info.cwd) === abs);
}

/** Every session under every root, newest first. */
export async function listAllSessions(options: DiscoveryOptions = {}): Promise<SessionInfo[]> {
  const paths: string[] = [];
  for (const root of sessionRoots(options)) rootFiles(root, paths, options.onWarning);
  return infos(paths, options);
}

function matches(info: SessionInfo, arg: string): boolean {
  const name = basename(info.path);
  const fileId = idFromFileName(info.path);
  return info.id.startsWith(arg) || name.startsWith(arg) || fileId?.startsWith(arg) === true;
}

/**
 * Finds one session by id prefix, file-name prefix or the id part of its file name: the bucket
 * of `cwd` first (when one is given), then every root. None → `SESSION_NOT_FOUND`, unless a directory or file could not
 * be read (no permission, EIO): then the session may be there, unseen → `PERSISTENCE_FAILED`
 * naming what could not be read. Several → `SESSION_AMBIGUOUS`.
 */
export async function resolveSession(arg: string, cwd: string | undefined, options: DiscoveryOptions = {}): Promise<SessionInfo> {
  if (typeof arg !== "string" || arg.trim().length === 0) throw new TranscriptStoreError("SESSION_NOT_FOUND", "No session id given");
  const needle = arg.trim();
  let unreadable: StoreWarning | null = null;
  const onWarning = (w: StoreWarning) => {
    if (w.code === "PERSISTENCE_FAILED") unreadable ??= w;
    options.onWarning?.(w);
  };
  const listing = { ...options, onWarning };
  const all = () => listAllSessions(listing);
  for (const pool of cwd === undefined ? [all] : [() => listSessions(cwd, listing), all]) {
    const candidates = (await pool()).filter((info) => matches(info, needle));
    const unique = [...new Map(candidates.map((c) => [c.path, c])).values()];
    if (unique.length === 1) return unique[0]!;
    if (unique.length > 1) {
      const exact = unique.filter((c) => c.id === needle);
      if (exact.length === 1) return exact[0]!;
      const newest = [...unique].sort((a, b) => b.modified.getTime() - a.modified.getTime());
      throw new SessionAmbiguousError(
        needle,
        newest.map((c) => ({ id: c.id, title: c.title ?? c.firstMessage, modified: c.modified, path: c.path })),
      );
    }
  }
  const missed = unreadable as StoreWarning | null;
  if (missed !== null)
    throw new TranscriptStoreError(
      "PERSISTENCE_FAILED",
      `No session matches "${needle}" among those that could be read: ${missed.message}`,
      {
        path: missed.path,
      },
    );
  throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session matches "${needle}"`);
}

/** The paths of every session file a listing of all roots walks (no file is opened): what the index covers. */
export function sessionFilePaths(options: DiscoveryOptions = {}): string[] {
  const paths: string[] = [];
  for (const root of sessionRoots(options)) rootFiles(root, paths, options.onWarning);
  return paths;
}
