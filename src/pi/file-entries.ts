import { randomUUID } from "node:crypto";
import { existsSync, readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join, resolve } from "node:path";
import { TranscriptStoreError } from "../errors.ts";
import { BlobStore } from "../blob/blob-store.ts";
import { decodeLine } from "../format/decode-line.ts";
import { ensureDir } from "../io.ts";
import { cwdBucket, isAuxiliarySessionName, resolveStoreDirs } from "../session/paths.ts";
import { rehydrateValue } from "../session/rehydrate.ts";
import { headerEndOffset, readSessionHeader, scanSessionFile } from "../session/session-file-reader.ts";
import { CURRENT_SESSION_VERSION, type FileEntry, type SessionEntry, type SessionHeader } from "./types.ts";
import type { PiStoreOptions } from "./options.ts";

/** pi's agent directory: `$PI_CODING_AGENT_DIR` (a leading `~` expanded), else `~/.pi/agent`. */
export function defaultAgentDir(): string {
  const env = process.env.PI_CODING_AGENT_DIR;
  if (env) return env === "~" ? homedir() : env.startsWith("~/") ? homedir() + env.slice(1) : env;
  return join(homedir(), ".pi", "agent");
}

/** The directory pi keeps a cwd's sessions in, `<agentDir>/sessions/--<cwd>--`, not created. */
export function defaultSessionDirPath(cwd: string, agentDir: string = defaultAgentDir()): string {
  return join(resolve(agentDir), "sessions", cwdBucket(resolve(cwd), "pi"));
}

/** The directory pi keeps a cwd's sessions in, `<agentDir>/sessions/--<cwd>--` (created, as pi does). */
export function getDefaultSessionDir(cwd: string, agentDir: string = defaultAgentDir()): string {
  const dir = defaultSessionDirPath(cwd, agentDir);
  // Durable at once (cheap: only when created): no `fsync` option reaches this free function.
  if (!existsSync(dir)) ensureDir(dir, true); // the store's directory creator: 0700, like every directory it makes
  return dir;
}

/** Whether two paths name the same place once resolved. */
export function samePath(a: string, b: string): boolean {
  return resolve(a) === resolve(b);
}

/**
 * pi 1.5.2's rule for a session id given to `create`, `newSession`, `inMemory` or `forkFrom`:
 * letters, digits, `.`, `_` and `-`, starting and ending with a letter or digit (it names the
 * file). Anything else is INVALID_OPTION, with pi's message.
 */
export function assertValidSessionId(id: string): void {
  if (typeof id !== "string" || !/^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/.test(id))
    throw new TranscriptStoreError(
      "INVALID_OPTION",
      "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', " +
        "and start and end with an alphanumeric character",
    );
}

/** An 8-hex entry id not in `taken` (a full uuid after 100 collisions), as pi makes them. */
export function newShortId(taken: { has(id: string): boolean }): string {
  for (let i = 0; i < 100; i++) {
    const id = randomUUID().slice(0, 8);
    if (!taken.has(id)) return id;
  }
  return randomUUID();
}

/**
 * Parses JSONL text into its records, as pi does: one JSON value per non-blank line, lines that do
 * not parse left out. Unlike pi, a line holding several records glued together (a lost newline)
 * yields each of them.
 */
export function parseSessionEntries(content: string): FileEntry[] {
  const out: FileEntry[] = [];
  for (const line of content.trim().split("\n")) {
    if (!line.trim()) continue;
    const decoded = decodeLine(Buffer.from(line));
    if (decoded.kind === "record") out.push(decoded.value as unknown as FileEntry);
    else if (decoded.kind === "glued") out.push(...(decoded.values as unknown as FileEntry[]));
    else if (decoded.kind === "malformed") {
      // not an object, or not JSON: pi keeps any JSON value, so keep those too
      try {
        out.push(JSON.parse(line) as FileEntry);
      } catch {
        // left out, as pi does; the caller's text is unchanged
      }
    }
  }
  return out;
}

/**
 * Brings entries to the current version in place, as pi does: v1 → v2 gives every entry an id and
 * chains parentIds in file order (a compaction's `firstKeptEntryIndex` becomes an id); v2 → v3
 * renames the `hookMessage` role to `custom`. The header's version follows.
 */
export function migrateSessionEntries(entries: FileEntry[]): void {
  const header = entries.find((e): e is SessionHeader => e.type === "session");
  const version = header?.version ?? 1;
  if (version >= CURRENT_SESSION_VERSION) return;
  if (version < 2) {
    const ids = new Set<string>();
    let previous: string | null = null;
    for (const entry of entries) {
      if (entry.type === "session") {
        entry.version = 2;
        continue;
      }
      const e = entry as SessionEntry & { firstKeptEntryIndex?: unknown };
      e.id = newShortId(ids);
      ids.add(e.id);
      e.parentId = previous;
      previous = e.id;
      if (e.type === "compaction" && typeof e.firstKeptEntryIndex === "number") {
        const target = entries[e.firstKeptEntryIndex];
        if (target !== undefined && target.type !== "session") e.firstKeptEntryId = target.id;
        delete e.firstKeptEntryIndex;
      }
    }
  }
  for (const entry of entries) {
    if (entry.type === "session") entry.version = 3;
    else if (entry.type === "message" && entry.message?.role === "hookMessage") entry.message.role = "custom";
  }
}

/**
 * The lines of a session file as pi reads them: [] when the file is absent or its first record is
 * not a session header. Read in chunks (no 512 MB string limit), glued records split, blob refs
 * resolved from the blob store so images read back as the base64 pi wrote. Nothing is written:
 * a line that does not parse is left out of the result and stays in the file.
 */
export function loadEntriesFromFile(filePath: string, options: PiStoreOptions = {}): FileEntry[] {
  const parsed = scanSessionFile(filePath);
  if (parsed === null || parsed.header === null || typeof parsed.header.id !== "string") return [];
  const blobs = new BlobStore(resolveStoreDirs({ blobsDir: options.blobsDir }).blobsDir);
  const warn = options.onWarning ?? (() => {});
  const records = parsed.records.map(({ record }) => rehydrateValue(record, blobs, warn) as unknown as FileEntry);
  return [parsed.header as unknown as SessionHeader, ...records];
}

function hasSessionHeader(path: string): boolean {
  try {
    return headerEndOffset(path) !== null;
  } catch {
    return false;
  }
}

/** The header of a session file, or null (no header, unreadable). */
function headerOf(path: string): Record<string, unknown> | null {
  try {
    return readSessionHeader(path) as Record<string, unknown> | null;
  } catch {
    return null;
  }
}

/** Whether a header's cwd is `cwd` (an empty or missing cwd matches nothing). */
function headerCwdIs(header: Record<string, unknown>, cwd: string): boolean {
  return typeof header.cwd === "string" && header.cwd !== "" && samePath(header.cwd, cwd);
}

/** The session file of `sessionDir` whose header id is `id` (and cwd `cwd`, when given), or undefined. */
export function findSessionById(sessionDir: string, id: string, cwd?: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(sessionDir);
  } catch {
    return undefined;
  }
  for (const name of names) {
    if (!name.endsWith(".jsonl") || isAuxiliarySessionName(basename(name))) continue;
    const path = join(sessionDir, name);
    const header = headerOf(path);
    if (header === null || header.id !== id) continue;
    if (cwd !== undefined && !headerCwdIs(header, cwd)) continue;
    return path;
  }
  return undefined;
}

/**
 * The session file of `sessionDir` modified last (a valid header required; of `cwd`, when given;
 * none whose id is in `skipIds`, the archived ones), or null.
 */
export function findMostRecentSession(sessionDir: string, cwd?: string, skipIds?: ReadonlySet<string>): string | null {
  let names: string[];
  try {
    names = readdirSync(sessionDir);
  } catch {
    return null;
  }
  let best: { path: string; mtimeMs: number } | null = null;
  for (const name of names) {
    if (!name.endsWith(".jsonl") || isAuxiliarySessionName(basename(name))) continue;
    const path = join(sessionDir, name);
    try {
      if (!statSync(path).isFile()) continue;
      if (cwd === undefined ? !hasSessionHeader(path) : !headerCwdIs(headerOf(path) ?? {}, cwd)) continue;
      if (skipIds !== undefined && skipIds.size > 0 && skipIds.has(String(headerOf(path)?.id))) continue;
      const mtimeMs = statSync(path).mtimeMs;
      if (best === null || mtimeMs > best.mtimeMs) best = { path, mtimeMs };
    } catch {
      // vanished while listing
    }
  }
  return best?.path ?? null;
}
