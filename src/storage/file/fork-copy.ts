/**
 * A whole-session fork of a session file without parsing it (`SessionManager.forkFrom`): the
 * source's head is read for its header, its body is copied byte for byte after the fork's new
 * header, and the fork reads its own file (held under its lock) the first time its entries are
 * needed. Whenever the copy cannot promise what opening the source and forking it gives (a legacy
 * or unusual head, a move journal, a link, NUL bytes, an unterminated last line, a line that may
 * be a fragment of pretty-printed JSON, an unreadable byte), nothing is kept and null is returned:
 * the caller takes that path. What only a parse finds (malformed or repeated lines, inline images a
 * lazy read takes out) is settled when the fork is read: its file is rewritten from memory, as the
 * open-and-fork path writes such a fork.
 */
import { headerEncryption } from "../../crypto/line-cipher.ts";
import { constants } from "node:fs";
import { resolve } from "node:path";
import { BLOB_REF_PREFIX } from "../../blob/blob-ref.ts";
import { isRegistered, referrerFor } from "../../blob/blob-referrers.ts";
import { TranscriptStoreError, type StoreWarning } from "../../errors.ts";
import { headerVersion } from "../../format/migrate.ts";
import { PRETTY_FRAGMENT_MAX_BYTES, parseSessionBytes } from "../../format/session-parser.ts";
import { CURRENT_VERSION, type SessionEntry, type SessionHeader } from "../../format/types.ts";
import { io } from "../../io.ts";
import { linkTree } from "../../session/artifact-dir-copy.ts";
import { forkHeader } from "../../session/fork-header.ts";
import { readMoveJournal } from "../../session/move-journal.ts";
import { artifactsDirOf } from "../../session/paths.ts";
import { headerEndOffset, scanLimits } from "../../session/session-file-reader.ts";
import { loadSessionFile } from "../../session/session-loader.ts";
import type { ResolvedSessionManagerOptions } from "../../session/session-options.ts";
import type { OpenedSession } from "../session-storage.ts";
import type { FileSessionStorage } from "./file-session.ts";
import { type BodyWriter, ensureParent, ensureRemoved, sessionPathFor } from "./file-paths.ts";
import { isCleanCurrentFile, startNewFile } from "./file-start.ts";

/** @internal Counts of the copy path's work, for tests (a fork made without reading any entry). */
export const forkCopyStats = { copies: 0, fallbacks: 0 };

/** Why the byte copy gave up (the fork is then made by opening the source). */
class NotCopyable extends Error {}

/** The source's header and the byte range of its body, read through one descriptor. */
interface SourcePlan {
  header: SessionHeader;
  start: number;
  end: number;
}

/**
 * Forks the whole session file at `sourcePath` into `cwd` by copying its body, or returns null
 * (nothing created) when only opening the source gives the same result.
 */
export async function forkFileByCopy(
  sourcePath: string,
  cwd: string,
  options: ResolvedSessionManagerOptions,
): Promise<OpenedSession | null> {
  const source = resolve(sourcePath);
  // A move a crash interrupted is finished or reported by the open path.
  if (readMoveJournal(source) !== null) return fallBack();
  let fd: number;
  try {
    fd = io.openSync(source, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return fallBack(); // absent, a link, unreadable: the open path says so (or reads the link)
  }
  try {
    const plan = planOf(fd);
    // An encrypted session's lines are bound to its id: its fork is written from its entries (the open path, with the key).
    if (plan === null || headerEncryption(plan.header) !== null) return fallBack();
    const header = forkHeader(plan.header, cwd, options.now());
    const path = sessionPathFor(header, options);
    ensureParent(path, options);
    linkTree(artifactsDirOf(source), artifactsDirOf(path), (w) => options.onWarning(w), "link", options.fsync);
    let opened: OpenedSession;
    try {
      const copy: BodyWriter = (emit, register) => copyBody(fd, plan, options.chunkSize, emit, refWatch(path, options, register));
      opened = await startNewFile(path, header, options, [], undefined, copy);
    } catch (err) {
      ensureRemoved(artifactsDirOf(path));
      if (err instanceof NotCopyable || (err instanceof TranscriptStoreError && err.cause instanceof NotCopyable)) return fallBack();
      throw err;
    }
    forkCopyStats.copies++;
    let storage: FileSessionStorage | null = null;
    return {
      ...opened,
      entries: () => loadCopiedFork(storage!, source, options),
      storage: (hooks) => {
        storage = opened.storage(hooks) as FileSessionStorage;
        return storage;
      },
    };
  } finally {
    io.closeSync(fd);
  }
}

function fallBack(): null {
  forkCopyStats.fallbacks++;
  return null;
}

/**
 * The header and body range of the source open at `fd`, or null unless its head is exactly one
 * clean line holding a current-version header (then the open path reads nothing else of it).
 */
function planOf(fd: number): SourcePlan | null {
  let stat;
  let head: Buffer;
  try {
    stat = io.fstatSync(fd);
    if (!stat.isFile()) return null;
    const start = headerEndOffset(fd);
    // A header line too long for one string is a bad header to the scanner.
    if (start === null || start > stat.size || start > scanLimits.maxLineBytes) return null;
    head = Buffer.allocUnsafe(start);
    if (readAt(fd, head, 0) !== start) return null;
  } catch {
    return null;
  }
  const start = head.length;
  const parsed = parseSessionBytes(head);
  const clean =
    parsed.header !== null &&
    parsed.linesRead === 1 &&
    parsed.records.length === 0 &&
    parsed.malformed.length === 0 &&
    parsed.repaired.length === 0 &&
    parsed.nulRuns === 0;
  if (!clean || headerVersion(parsed.header!) < CURRENT_VERSION) return null;
  return { header: parsed.header!, start, end: stat.size };
}

/** Reads `buffer.length` bytes at `position` (fewer only at the end of the file). */
function readAt(fd: number, buffer: Buffer, position: number): number {
  let done = 0;
  while (done < buffer.length) {
    const n = io.readSync(fd, buffer, done, buffer.length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/**
 * Streams the body through `emit` in chunks, up to the length the source had when planned (a
 * writer appending meanwhile adds nothing), checking what the open path would treat otherwise.
 * With `register`, the fork registers with the blob store only when a copied line names a blob
 * (as a new session does at its first ref), before the copy is renamed into place.
 */
function copyBody(fd: number, plan: SourcePlan, chunkSize: number, emit: (data: Buffer) => void, register: (() => void) | null): void {
  const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(chunkSize, plan.end - plan.start)));
  const refs = register === null ? null : new RefFinder();
  let position = plan.start;
  let lineStart = plan.start;
  while (position < plan.end) {
    let n: number;
    try {
      n = io.readSync(fd, buffer, 0, Math.min(buffer.length, plan.end - position), position);
    } catch (err) {
      throw new NotCopyable(`source unreadable: ${(err as Error).message}`);
    }
    if (n === 0) throw new NotCopyable("source shrank");
    const data = buffer.subarray(0, n);
    if (data.indexOf(0) !== -1) throw new NotCopyable("NUL bytes");
    for (let nl = data.indexOf(0x0a); nl !== -1; nl = data.indexOf(0x0a, nl + 1)) {
      const length = position + nl - lineStart;
      // A line this short is no entry but may be a pretty-printed fragment, which can make the
      // whole file unreadable (`BAD_HEADER`, see `SessionParser.finish`).
      if (length > 0 && length <= PRETTY_FRAGMENT_MAX_BYTES) throw new NotCopyable("a line that may be a fragment");
      lineStart = position + nl + 1;
    }
    refs?.push(data);
    emit(data);
    position += n;
  }
  if (lineStart !== plan.end) throw new NotCopyable("unterminated last line");
  if (refs?.found) register!();
}

/**
 * How the copy keeps "the store knows where a session naming its blobs lives": nothing to watch
 * where the fork's place is registered already (registering again is one stat) or where there is
 * no blob store yet (no blob a copied ref could name exists, and whoever stores the first one
 * registers its own place first); else the copied lines are searched for a ref.
 */
function refWatch(path: string, options: ResolvedSessionManagerOptions, register: () => void): (() => void) | null {
  if (isRegistered(options.blobsDir, referrerFor(path, options.sessionsDir))) {
    register();
    return null;
  }
  return io.existsSync(options.blobsDir) ? register : null;
}

/** Whether a stream of chunks holds `BLOB_REF_PREFIX`, also across a chunk boundary. */
class RefFinder {
  found = false;
  private tail: Buffer = Buffer.alloc(0);

  push(data: Buffer): void {
    if (this.found) return;
    const keep = BLOB_REF_PREFIX.length - 1;
    const seam = Buffer.concat([this.tail, data.subarray(0, keep)]);
    this.found = seam.includes(BLOB_REF_PREFIX) || data.includes(BLOB_REF_PREFIX);
    // The last bytes seen (a chunk shorter than the prefix adds to the previous ones).
    this.tail = Buffer.from((data.length >= keep ? data : seam).subarray(-keep));
  }
}

/**
 * The entries of a byte-copied fork, read from its own file as the source would have been read
 * (same rehydration; warnings about the copied lines name the source, where they are kept). When
 * memory does not hold those lines verbatim, the file is rewritten from memory.
 */
function loadCopiedFork(storage: FileSessionStorage, source: string, options: ResolvedSessionManagerOptions): SessionEntry[] {
  const path = storage.path;
  const warn = (w: StoreWarning) => options.onWarning({ ...w, path: w.path === undefined || w.path === path ? source : w.path });
  storage.sources.clear();
  const loaded = loadSessionFile(path, {
    rehydrate: options.rehydrate,
    blobThreshold: options.prepare.blobThreshold,
    chunkSize: options.chunkSize,
    blobs: storage.blobs,
    sources: storage.sources,
    warn,
    writable: false,
    fsync: options.fsync,
  });
  if (loaded === null) throw new TranscriptStoreError("PERSISTENCE_FAILED", `The fork's file is gone: ${path}`, { path });
  if (!isCleanCurrentFile(loaded) || storage.sources.size > 0) storage.rewriteWith(loaded.entries);
  return loaded.entries;
}
