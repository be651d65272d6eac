import { createExclusive, writeNewFrom } from "../../io-exclusive.ts";
import { basename, dirname, join, sep } from "node:path";
import { BlobStore } from "../../blob/blob-store.ts";
import { referrerFor, registerReferrer } from "../../blob/blob-referrers.ts";
import { TranscriptStoreError } from "../../errors.ts";
import { ensureDir, io, isTempFileName } from "../../io.ts";
import { artifactsDirOf, cwdBucket, quarantinePathOf, sessionFileName } from "../../session/paths.ts";
import { SessionFile, SessionFileDraft } from "../../session/session-file.ts";
import { readSessionHeader } from "../../session/session-file-reader.ts";
import { acquireSessionLock } from "../../session/session-lock.ts";
import type { ResolvedSessionManagerOptions } from "../../session/session-options.ts";
import { relateSessionStreams, type SessionRelation } from "../session-relation.ts";
import { importConflict, type ImportOutcome, type SessionSnapshot } from "../session-snapshot.ts";
import { locateFile, rawLines } from "./file-export.ts";
import { artifactNameClash, clashMessage } from "../artifact-name-clash.ts";

/** Sessions into the file tree: the file backend's `importSnapshot` (exports: file-export.ts). */

/** `<stream of the snapshot>`: its header line, then its entry lines. */
async function* withHeader(snapshot: SessionSnapshot): AsyncIterable<string> {
  yield snapshot.headerLine;
  yield* snapshot.lines();
}

/** Where a new file for the snapshot goes: `<bucket of its cwd>/<its time>_<its id>.jsonl`. */
function newPathFor(snapshot: SessionSnapshot, options: ResolvedSessionManagerOptions): string {
  const { header } = snapshot;
  const created = new Date(Date.parse(header.timestamp) || options.now().getTime());
  const cwd = header.cwd || options.cwd || process.cwd();
  return join(options.sessionsDir, cwdBucket(cwd, options.layout), sessionFileName(created, header.id));
}

/**
 * Creates `path` empty and exclusively (false: a file is there): an import never replaces a
 * session. The caller holds the lock of `path`, so an empty file already there is the claim of an
 * import killed before its commit (a live one holds the lock until then): that claim and what it
 * wrote beside it (artifacts, quarantine) are reclaimed first, never reported as a conflict.
 */
function claimNewFile(path: string): boolean {
  const there = io.lstatSync(path, { throwIfNoEntry: false });
  if (there?.isFile() && there.size === 0) {
    io.rmSync(artifactsDirOf(path), { recursive: true, force: true });
    io.rmSync(quarantinePathOf(path), { force: true });
    const draftTemp = `.${basename(path)}.`;
    for (const name of io.readdirSync(dirname(path)) as string[])
      if (name.startsWith(draftTemp) && isTempFileName(name)) io.rmSync(join(dirname(path), name), { force: true });
    io.rmSync(path, { force: true });
  }
  return createExclusive(path);
}

/**
 * Stores the blobs the snapshot's lines reference that the blob store lacks (`BLOB_MISSING` when
 * the source lacks one too); true when it references any.
 */
async function carryBlobs(snapshot: SessionSnapshot, options: ResolvedSessionManagerOptions): Promise<boolean> {
  const store = new BlobStore(options.blobsDir, { fsync: options.fsync });
  let any = false;
  for await (const hash of snapshot.blobHashes()) {
    any = true;
    if (await store.has(hash)) continue;
    const bytes = await snapshot.blob(hash);
    // as a database refuses it: a session is never taken in with a ref to nothing
    if (bytes === null) throw new TranscriptStoreError("BLOB_MISSING", `Blob ${hash} is referenced by the import but found nowhere`);
    await store.putHashedFrom(hash, bytes.open());
  }
  return any;
}

/** Writes the artifact files the session's artifacts directory lacks (never replacing one). */
async function carryArtifacts(snapshot: SessionSnapshot, path: string, options: ResolvedSessionManagerOptions): Promise<void> {
  const root = artifactsDirOf(path);
  for await (const artifact of snapshot.artifacts()) {
    const parts = artifact.name.split("/");
    if (parts.some((p) => p === "" || p === "." || p === ".." || p.includes(sep) || p.includes("\0"))) {
      throw new TranscriptStoreError(
        "INVALID_OPTION",
        `artifact name ${JSON.stringify(artifact.name)} is not a relative path inside the session`,
      );
    }
    const dir = join(root, ...parts.slice(0, -1));
    ensureDir(dir, options.fsync);
    await writeNewFrom(join(dir, parts[parts.length - 1]!), artifact.open(), { fsync: options.fsync });
  }
}

/**
 * Takes a snapshot into the file tree under the one rule (`relateSessions`) against the file
 * holding its id: none → a new file (quarantine, artifacts and blobs carried); the same or more
 * → unchanged; a beginning of it → the rest appended under the session's lock; diverged →
 * `IMPORT_CONFLICT`, nothing written.
 */
export async function importFile(snapshot: SessionSnapshot, options: ResolvedSessionManagerOptions): Promise<ImportOutcome> {
  const { id } = snapshot.header;
  let lines = 0;
  for await (const _ of snapshot.lines()) lines++;
  // Names that cannot all be files of one directory are refused before anything is written.
  const names: string[] = [];
  for await (const artifact of snapshot.artifacts()) names.push(artifact.name);
  const clash = artifactNameClash(names);
  if (clash !== null) throw new TranscriptStoreError("INVALID_OPTION", `session ${id}: ${clashMessage(clash)}`);
  const existing = locateFile(id, options);
  if (existing === null) {
    const path = newPathFor(snapshot, options);
    ensureDir(dirname(path));
    const lock = await acquireSessionLock(path, { staleMs: options.lockStaleMs, onCompromised: () => {} });
    try {
      if (claimNewFile(path)) {
        await createFile(snapshot, path, options);
        return { status: "created", id, location: path, relation: null, header: "same", lines };
      }
    } finally {
      await lock.release();
    }
    return reimportFile(snapshot, path, lines, options);
  }
  return reimportFile(snapshot, existing, lines, options);
}

/** Fills the claimed (empty) `path`; the caller holds its lock. */
async function createFile(snapshot: SessionSnapshot, path: string, options: ResolvedSessionManagerOptions): Promise<void> {
  const quarantine = quarantinePathOf(path);
  const hadQuarantine = io.existsSync(quarantine);
  let draft: SessionFileDraft | null = null;
  try {
    const records: string[] = [];
    for await (const record of snapshot.quarantine()) records.push(record);
    // Quarantine first: a crash in between leaves extra quarantine, never a session missing its lines.
    new SessionFile(path, { fsync: options.fsync, now: options.now }).quarantineRecords(records);
    if (await carryBlobs(snapshot, options)) registerReferrer(options.blobsDir, referrerFor(path, options.sessionsDir));
    await carryArtifacts(snapshot, path, options);
    draft = SessionFileDraft.begin(path);
    for await (const line of withHeader(snapshot)) draft.write(Buffer.from(`${line}\n`));
    if (options.fsync) draft.sync();
    draft.close();
    draft.commit(options.fsync);
    draft = null;
  } catch (err) {
    draft?.discard();
    if (io.statSync(path, { throwIfNoEntry: false })?.size === 0) {
      // the claim was fresh (a leftover one is reclaimed first): what is beside it is this import's
      io.rmSync(artifactsDirOf(path), { recursive: true, force: true });
      io.rmSync(path, { force: true });
    }
    if (!hadQuarantine) io.rmSync(quarantine, { force: true });
    throw err;
  }
}

async function reimportFile(
  snapshot: SessionSnapshot,
  path: string,
  lines: number,
  options: ResolvedSessionManagerOptions,
): Promise<ImportOutcome> {
  const { id } = snapshot.header;
  const outcome = (status: ImportOutcome["status"], relation: SessionRelation): ImportOutcome => ({
    status,
    id,
    location: path,
    relation,
    header: relation === "storeAhead" && !headerMatches(snapshot, path) ? "kept" : "same",
    lines,
  });
  const relation = await relateSessionStreams(withHeader(snapshot), rawLines(path));
  if (relation === "diverged") throw importConflict(id, path);
  if (relation !== "sourceAhead") return outcome("unchanged", relation);
  const lock = await acquireSessionLock(path, { staleMs: options.lockStaleMs, onCompromised: () => {} });
  try {
    // Decided again under the lock: a writer may have appended since.
    const now = await relateSessionStreams(withHeader(snapshot), rawLines(path));
    if (now === "diverged") throw importConflict(id, path);
    if (now !== "sourceAhead") return outcome("unchanged", now);
    const size = io.statSync(path).size;
    if (size > 0 && !endsWithNewline(path, size)) throw importConflict(id, path);
    let stored = -1; // the header line
    for await (const _ of rawLines(path)) stored++;
    if (await carryBlobs(snapshot, options)) registerReferrer(options.blobsDir, referrerFor(path, options.sessionsDir));
    await carryArtifacts(snapshot, path, options);
    const rest: Buffer[] = [];
    let at = 0;
    for await (const line of snapshot.lines()) if (at++ >= stored) rest.push(Buffer.from(`${line}\n`));
    const file = new SessionFile(path, { fsync: options.fsync, now: options.now });
    try {
      file.append(Buffer.concat(rest));
    } finally {
      file.close();
    }
    return outcome("appended", now);
  } finally {
    await lock.release();
  }
}

function endsWithNewline(path: string, size: number): boolean {
  const fd = io.openSync(path, "r");
  try {
    const last = Buffer.alloc(1);
    io.readSync(fd, last, 0, 1, size - 1);
    return last[0] === 0x0a;
  } finally {
    io.closeSync(fd);
  }
}

function headerMatches(snapshot: SessionSnapshot, path: string): boolean {
  return JSON.stringify(readSessionHeader(path)) === snapshot.headerLine;
}
