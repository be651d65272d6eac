import { join, resolve } from "node:path";
import { BlobStore } from "../../blob/blob-store.ts";
import { errnoCode } from "../../errors.ts";
import type { SessionHeader } from "../../format/types.ts";
import { io } from "../../io.ts";
import { artifactsDirOf, fileSafeId, isAuxiliarySessionName, quarantinePathOf } from "../../session/paths.ts";
import { readSessionHeader } from "../../session/session-file-reader.ts";
import type { ResolvedSessionManagerOptions } from "../../session/session-options.ts";
import { hashesOfLines, type SessionSnapshot, type SnapshotArtifact, type SnapshotBytes, snapshotOfEntries } from "../session-snapshot.ts";
import type { StorageHooks } from "../session-storage.ts";
import { openFile } from "./file-start.ts";
import { headerEncryption } from "../../crypto/line-cipher.ts";
import { checkSealedLines } from "./sealed-export.ts";
import { fileBytes, rawLines, skipFirst, streamableFile } from "../session-file-lines.ts";

export { fileBytes, rawLines, streamableFile } from "../session-file-lines.ts";

/** Sessions out of the file tree: the file backend's `locate` and `exportSnapshot` (imports: file-import.ts). */

/** The id as it may appear in a file name (what `import` has always used): the one encoding of paths.ts. */
export { fileSafeId };

/** The session file holding session `id` (its name ends in `_<id>.jsonl` and its header says so), or null. */
export function locateFile(id: string, options: Pick<ResolvedSessionManagerOptions, "sessionsDir">): string | null {
  // a session created here is named by its id as it is; an imported one by its file-safe form
  const suffixes = [`_${id}.jsonl`, `_${fileSafeId(id)}.jsonl`];
  let buckets: string[];
  try {
    buckets = io.readdirSync(options.sessionsDir);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw err;
  }
  for (const bucket of buckets.sort()) {
    const dir = join(options.sessionsDir, bucket);
    let names: string[];
    try {
      names = io.readdirSync(dir);
    } catch (err) {
      if (errnoCode(err) === "ENOTDIR" || errnoCode(err) === "ENOENT") continue;
      throw err;
    }
    for (const name of names.sort()) {
      if (!suffixes.some((suffix) => name.endsWith(suffix)) || isAuxiliarySessionName(name)) continue;
      const path = join(dir, name);
      if (!io.statSync(path, { throwIfNoEntry: false })?.isFile()) continue;
      if (readSessionHeader(path)?.id === id) return path;
    }
  }
  return null;
}

async function* quarantineOf(path: string): AsyncIterable<string> {
  const q = quarantinePathOf(path);
  if (!io.existsSync(q)) return;
  for await (const line of rawLines(q)) if (line.length > 0) yield line;
}

/** Every regular file under `dir`, named by its path inside it with `/` separators. */
async function* artifactFiles(dir: string, prefix = ""): AsyncIterable<SnapshotArtifact> {
  let entries;
  try {
    entries = io.readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") return;
    throw err;
  }
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* artifactFiles(path, `${prefix}${entry.name}/`);
    else if (entry.isFile()) yield { name: `${prefix}${entry.name}`, ...fileBytes(path) };
  }
}

const quietHooks = (options: ResolvedSessionManagerOptions, header: () => SessionHeader): StorageHooks => ({
  warn: (w) => options.onWarning(w),
  lost: () => {},
  header,
});

/** A stored blob's file as bytes read on demand (unverified: the reader hashes what it reads), or null. */
function blobFile(blobs: BlobStore, hash: string): SnapshotBytes | null {
  const path = blobs.pathOf(hash);
  const stat = io.statSync(path, { throwIfNoEntry: false });
  return stat?.isFile() === true ? fileBytes(path, stat.size) : null;
}

/**
 * The session file at `path` as a snapshot. A clean current file (`cleanHeader`) hands out its
 * lines as they are, read from the file on each call: it is never loaded. A legacy or damaged one is
 * read through its migration (what `open` shows: loaded whole), its damaged lines left in the file
 * and counted in `damaged`; a file with a BOM or an encrypted one is loaded too, to see what it holds.
 */
export async function exportFile(path: string, options: ResolvedSessionManagerOptions): Promise<SessionSnapshot> {
  const abs = resolve(path);
  const sealed = await exportSealedFile(abs, options);
  if (sealed !== null) return sealed;
  const blobs = new BlobStore(options.blobsDir, { fsync: options.fsync, readOnly: true });
  const common = {
    quarantine: () => quarantineOf(abs),
    artifacts: () => artifactFiles(artifactsDirOf(abs)),
    blob: async (hash: string) => blobFile(blobs, hash),
  };
  const clean = await streamableFile(abs);
  if (clean !== null) return { ...clean, blobHashes: () => hashesOfLines(clean.lines()), damaged: 0, ...common };
  const opened = await openFile(abs, { ...options, readOnly: true, rehydrate: "lazy" });
  const storage = opened.storage(quietHooks(options, () => opened.header));
  try {
    const report = opened.loadReport;
    // (a BOM or an encrypted session: what the loader makes of it)
    const loadedClean =
      report.migratedFrom === null &&
      report.malformed.length === 0 &&
      !report.tornTail &&
      report.repaired.length === 0 &&
      report.nulRuns === 0;
    if (loadedClean) {
      const headerLine = await firstLine(abs);
      const lines = () => skipFirst(rawLines(abs));
      return { header: opened.header, headerLine, lines, blobHashes: () => hashesOfLines(lines()), damaged: 0, ...common };
    }
    const entries = typeof opened.entries === "function" ? opened.entries() : opened.entries;
    const snapshot = snapshotOfEntries(
      opened.header,
      entries.map((e) => storage.asStored(e)),
      options.prepare,
      { bytesOf: (hash) => storage.blobReader.getVerifiedSync(hash), warn: (w) => options.onWarning(w) },
    );
    return { ...snapshot, ...common, damaged: report.malformed.length + (report.tornTail ? 1 : 0) };
  } finally {
    await storage.close();
  }
}

/**
 * An encrypted session file exported without its key: its lines as they are (ciphertext moves as
 * ciphertext, under the same key: its lines are bound to the session id and their order, which an
 * import keeps), once `checkSealedLines` found nothing only the key could repair. Null: not that case.
 */
async function exportSealedFile(abs: string, options: ResolvedSessionManagerOptions): Promise<SessionSnapshot | null> {
  const header = headerQuietly(abs);
  if (header === null || headerEncryption(header) === null || (options.encryption?.key ?? null) !== null) return null;
  await checkSealedLines(abs, header, rawLines(abs));
  const blobs = new BlobStore(options.blobsDir, { fsync: options.fsync, readOnly: true });
  const lines = () => skipFirst(rawLines(abs));
  return {
    header,
    headerLine: await firstLine(abs),
    lines,
    blobHashes: () => hashesOfLines(lines()),
    damaged: 0,
    quarantine: () => quarantineOf(abs),
    artifacts: () => artifactFiles(artifactsDirOf(abs)),
    blob: async (hash: string) => blobFile(blobs, hash),
  };
}

/** The file's header, or null when it has none or cannot be read (the open then reports what is wrong, with its code). */
function headerQuietly(path: string): SessionHeader | null {
  try {
    return readSessionHeader(path);
  } catch {
    return null;
  }
}

async function firstLine(path: string): Promise<string> {
  for await (const line of rawLines(path)) return line;
  return "";
}
