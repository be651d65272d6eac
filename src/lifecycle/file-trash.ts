import { basename, dirname, isAbsolute, join } from "node:path";
import { registerReferrer } from "../blob/blob-referrers.ts";
import { errnoCode, TranscriptStoreError, type WarningHandler } from "../errors.ts";
import { ensureDir, fsyncDir, io, isTempFileName, writeFileAtomic } from "../io.ts";
import { readMoveJournal } from "../session/move-journal.ts";
import { artifactsDirOf, fileSafeId, quarantinePathOf } from "../session/paths.ts";
import { acquireSessionLock, type SessionLock } from "../session/session-lock.ts";
import type { TrashEntry } from "./lifecycle-driver.ts";
import { appendLifecycleRecord } from "./lifecycle-log.ts";

/*
 * The file tree's trash: `<root>/trash/<trashId>/` holds a removed session's files under their own
 * names (session file, artifact directory, quarantine, backups) and `trash.json`, the entry's
 * journal. Every step is a rename, and the session file's rename is the commit: it moves first into
 * the trash (so a session file in place always has every part beside it: no writer ever starts a
 * second artifacts directory) and last out of it. A crash leaves the journal naming the step;
 * `recoverTrash` (run before every trash operation) rolls a committed step forward and undoes an
 * uncommitted one, so a session is always whole either in place or in the trash.
 */

type TrashState = "trashing" | "trashed" | "restoring" | "purging";

interface TrashJournal {
  version: 1;
  state: TrashState;
  sessionId: string;
  cwd: string;
  from: string;
  trashedAt: string;
  bytes: number;
  /** Names moved, relative to the session's directory; the session file is last. */
  parts: string[];
}

const JOURNAL = "trash.json";

/** `<root>/trash`: never removed once made (gc marks it as a registered place). */
export function trashDirOf(root: string): string {
  return join(root, "trash");
}

/**
 * Writes an entry's journal. `fsync: false` only where losing the write is harmless: a "trashed"
 * that reverts to "trashing" is committed again by recovery (the session file is in the trash).
 */
function writeJournal(dir: string, journal: TrashJournal, fsync = true): void {
  writeFileAtomic(join(dir, JOURNAL), (emit) => emit(Buffer.from(`${JSON.stringify(journal)}\n`)), { fsync });
}

function readJournal(dir: string): TrashJournal | null {
  try {
    const value = JSON.parse(io.readFileSync(join(dir, JOURNAL), "utf8") as string) as TrashJournal;
    if (value?.version !== 1 || !Array.isArray(value.parts) || typeof value.from !== "string" || !isAbsolute(value.from)) return null;
    // Parts are plain names beside the session file: a hand-edited journal must not move anything elsewhere.
    if (value.parts.length === 0 || !value.parts.every(isPlainName) || value.parts.at(-1) !== basename(value.from)) return null;
    return value;
  } catch {
    return null;
  }
}

function isPlainName(name: unknown): boolean {
  return typeof name === "string" && name !== "" && name !== "." && name !== ".." && !name.includes("/") && !name.includes("\\");
}

function exists(path: string): boolean {
  return io.lstatSync(path, { throwIfNoEntry: false }) !== undefined;
}

/** Bytes under `path` (a file, or a directory walked without following links). */
export function bytesUnder(path: string): number {
  const stat = io.lstatSync(path, { throwIfNoEntry: false });
  if (stat === undefined) return 0;
  if (!stat.isDirectory()) return stat.size;
  let total = 0;
  for (const name of io.readdirSync(path)) total += bytesUnder(join(path, name));
  return total;
}

/** The names that travel with a session file (those present), the session file last. */
export function sessionParts(file: string): string[] {
  const names = [artifactsDirOf(file), quarantinePathOf(file), `${file}.bak`].filter(exists).map((p) => basename(p));
  const beside = namesBeside(file);
  return [...names, ...numberedBackups(file, beside), ...rewriteTemps(file, beside), basename(file)];
}

function namesBeside(file: string): string[] {
  try {
    return io.readdirSync(dirname(file)) as string[];
  } catch {
    return [];
  }
}

/** `<file>.2.bak`, `<file>.3.bak`, … beside `file` (what `backupSessionFile` makes once `.bak` is taken). */
function numberedBackups(file: string, beside: readonly string[]): string[] {
  const base = basename(file);
  return beside
    .filter((n) => n.startsWith(`${base}.`) && /^\d+\.bak$/.test(n.slice(base.length + 1)))
    .sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
}

/**
 * The temp files of rewrites of `file` (`.<name>.<pid>.<random>.tmp`, io.ts `tempPathFor`) beside
 * it: with the session's lock held, a killed process's (the whole transcript, which must not stay
 * behind a purge). The lock's own declaration temps are the lock's.
 */
function rewriteTemps(file: string, beside: readonly string[]): string[] {
  const own = `.${basename(file)}.`;
  return beside.filter((n) => n.startsWith(own) && isTempFileName(n) && !n.startsWith(`${own}lock`)).sort();
}

function entryOf(trashId: string, j: TrashJournal): TrashEntry {
  return { trashId, sessionId: j.sessionId, cwd: j.cwd, from: j.from, trashedAt: new Date(j.trashedAt), bytes: j.bytes };
}

function moveFailed(what: string, err: unknown, path?: string): TranscriptStoreError {
  return new TranscriptStoreError("MOVE_FAILED", `${what}: ${(err as Error).message}`, { path, cause: err });
}

export interface FileTrashOptions {
  root: string;
  blobsDir: string;
  lockStaleMs: number;
  onWarning?: WarningHandler;
  /** Run holding the session's lock, before anything moves (a throw stops the removal). */
  check?: () => Promise<void>;
}

/**
 * Moves the session at `file` (with its artifacts, quarantine and backup) into the trash, under
 * its lock: a live writer makes it throw `SESSION_LOCKED`, nothing moved.
 */
export async function trashSessionFile(
  file: string,
  meta: { sessionId: string; cwd: string },
  at: Date,
  options: FileTrashOptions,
): Promise<TrashEntry> {
  if (!exists(file)) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session file at ${file}`, { path: file });
  if (readMoveJournal(file) !== null)
    throw new TranscriptStoreError("MOVE_FAILED", `An interrupted move of ${file} is pending: open the session once to finish it`, {
      path: file,
    });
  const lock = await acquireSessionLock(file, { staleMs: options.lockStaleMs, onCompromised: () => {} });
  try {
    await options.check?.();
    const trash = trashDirOf(options.root);
    ensureDir(trash, true);
    // Before any ref lands in the trash, gc must know to read it: trashed sessions keep their blobs.
    registerReferrer(options.blobsDir, { kind: "tree", path: trash });
    const parts = sessionParts(file);
    const source = dirname(file);
    const bytes = parts.reduce((sum, name) => sum + bytesUnder(join(source, name)), 0);
    const trashId = newEntryDir(trash, at, meta.sessionId);
    const dir = join(trash, trashId);
    const journal: TrashJournal = { version: 1, state: "trashing", ...meta, from: file, trashedAt: at.toISOString(), bytes, parts };
    writeJournal(dir, journal);
    // The flags go with the instance before it moves; an undone move gives them back (a restore record).
    record(options, "trash", trashId, journal, at);
    const sessionName = parts.at(-1)!;
    try {
      io.renameSync(join(source, sessionName), join(dir, sessionName));
    } catch (err) {
      record(options, "restore", trashId, journal, at);
      removeEntryDir(dir);
      throw moveFailed(`Cannot move ${file} to the trash`, err, file);
    }
    // Committed: the rest follows (a crash here is rolled forward by recovery).
    fsyncDir(source);
    try {
      moveRest(source, dir, parts);
    } catch (err) {
      // A part that cannot move (another device): everything goes back, the session file last.
      moveRest(dir, source, parts);
      io.renameSync(join(dir, sessionName), join(source, sessionName));
      record(options, "restore", trashId, journal, at);
      removeEntryDir(dir);
      throw moveFailed(`Cannot move ${file} to the trash`, err, file);
    }
    fsyncDir(source);
    fsyncDir(dir);
    writeJournal(dir, { ...journal, state: "trashed" }, false);
    return entryOf(trashId, journal);
  } finally {
    await lock.release();
  }
}

/**
 * Appends the lifecycle record of a step (the flags of the instance follow it, lifecycle-log.ts).
 * Written at the step's commit and again by a recovery that finishes it: a record twice is harmless.
 */
function record(
  options: FileTrashOptions,
  op: "trash" | "restore" | "purge",
  trashId: string,
  journal: TrashJournal,
  at = new Date(),
): void {
  appendLifecycleRecord(options.root, { op, id: journal.sessionId, at: at.toISOString(), path: journal.from, trashId });
}

function newEntryDir(trash: string, at: Date, sessionId: string): string {
  const stamp = at.toISOString().replace(/[:.]/g, "-");
  // The id comes from a transcript: only its file-safe form names anything (never `/` or `..`).
  const name = `${stamp}_${fileSafeId(sessionId)}`;
  for (let n = 0; ; n++) {
    const trashId = n === 0 ? name : `${name}.${n}`;
    try {
      io.mkdirSync(join(trash, trashId), { mode: 0o700 });
      return trashId;
    } catch (err) {
      if (errnoCode(err) !== "EEXIST") throw moveFailed(`Cannot create a trash entry in ${trash}`, err, trash);
    }
  }
}

/** Moves the parts other than the session file from `from` to `to` (those still at `from`). */
function moveRest(from: string, to: string, parts: readonly string[]): void {
  for (const name of parts.slice(0, -1))
    if (exists(join(from, name)) && !exists(join(to, name))) io.renameSync(join(from, name), join(to, name));
}

/** Removes an entry whose parts are gone: its journal and any journal temp a killed write left. */
function removeEntryDir(dir: string): void {
  io.rmSync(join(dir, JOURNAL), { force: true });
  for (const name of io.readdirSync(dir) as string[]) if (isTempFileName(name)) io.rmSync(join(dir, name), { force: true });
  io.rmdirSync(dir);
}

/** Every committed entry of the trash, oldest first (interrupted operations recovered first). */
export async function listTrashEntries(options: FileTrashOptions): Promise<TrashEntry[]> {
  await recoverTrash(options);
  const trash = trashDirOf(options.root);
  const out: TrashEntry[] = [];
  for (const trashId of namesIn(trash)) {
    const journal = readJournal(join(trash, trashId));
    if (journal?.state === "trashed") out.push(entryOf(trashId, journal));
  }
  return out.sort((a, b) => a.trashedAt.getTime() - b.trashedAt.getTime() || a.trashId.localeCompare(b.trashId));
}

function namesIn(dir: string): string[] {
  try {
    return io.readdirSync(dir).filter((n) => !n.startsWith("."));
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return [];
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot read the trash ${dir}: ${(err as Error).message}`, { path: dir });
  }
}

/**
 * Puts a trash entry back where it was. Anything already at one of its names (a new session at
 * the same path) makes it refuse with `MOVE_FAILED`, nothing moved.
 */
export async function restoreTrashEntry(entry: TrashEntry, options: FileTrashOptions, at = new Date()): Promise<string> {
  const dir = join(trashDirOf(options.root), entry.trashId);
  const first = readJournal(dir);
  if (first === null || first.state !== "trashed")
    throw new TranscriptStoreError("SESSION_NOT_FOUND", `No trash entry ${entry.trashId}`, { path: dir });
  // Under the session's lock: another process's recovery (or restore, or purge) leaves the entry alone meanwhile.
  return withEntryLock(first, options, () => restoreLocked(entry, dir, options, at));
}

function restoreLocked(entry: TrashEntry, dir: string, options: FileTrashOptions, at: Date): string {
  const listed = readJournal(dir);
  if (listed === null || listed.state !== "trashed")
    throw new TranscriptStoreError("SESSION_NOT_FOUND", `No trash entry ${entry.trashId}`, { path: dir });
  const journal = withPartsIn(dir, listed);
  const source = dirname(journal.from);
  for (const name of journal.parts)
    if (exists(join(source, name)))
      throw new TranscriptStoreError("MOVE_FAILED", `Cannot restore ${entry.trashId}: ${join(source, name)} exists`, {
        path: join(source, name),
      });
  ensureDir(source, true);
  writeJournal(dir, { ...journal, state: "restoring" });
  const moved: string[] = [];
  try {
    for (const name of journal.parts) {
      io.renameSync(join(dir, name), join(source, name));
      moved.push(name);
    }
  } catch (err) {
    for (const name of moved.reverse()) io.renameSync(join(source, name), join(dir, name));
    writeJournal(dir, journal);
    throw moveFailed(`Cannot restore ${entry.trashId} to ${journal.from}`, err, journal.from);
  }
  fsyncDir(source);
  record(options, "restore", entry.trashId, journal, at);
  removeEntryDir(dir);
  return journal.from;
}

/** Deletes a trash entry for good (journaled: a crash mid-way is finished by the next recovery). */
export async function purgeTrashEntry(entry: TrashEntry, options: FileTrashOptions, at = new Date()): Promise<void> {
  const dir = join(trashDirOf(options.root), entry.trashId);
  const first = readJournal(dir);
  if (first === null || first.state !== "trashed")
    throw new TranscriptStoreError("SESSION_NOT_FOUND", `No trash entry ${entry.trashId}`, { path: dir });
  await withEntryLock(first, options, () => {
    const listed = readJournal(dir);
    if (listed === null || listed.state !== "trashed")
      throw new TranscriptStoreError("SESSION_NOT_FOUND", `No trash entry ${entry.trashId}`, { path: dir });
    const journal = withPartsIn(dir, listed);
    writeJournal(dir, { ...journal, state: "purging" });
    record(options, "purge", entry.trashId, journal, at);
    finishPurge(dir, journal);
  });
}

/**
 * Runs `step` holding the lock of the session path an entry came from: the one lock `rm` holds
 * while it moves the session in, so a step in progress (its journal mid-way) is never taken for a
 * crashed one by another process's recovery. A live holder is `SESSION_LOCKED`, nothing done.
 */
async function withEntryLock<T>(journal: TrashJournal, options: FileTrashOptions, step: () => T): Promise<T> {
  ensureDir(dirname(journal.from), true);
  const lock = await acquireSessionLock(journal.from, { staleMs: options.lockStaleMs, onCompromised: () => {} });
  try {
    return step();
  } finally {
    await lock.release();
  }
}

/**
 * The journal with every part the entry holds now: what `rm` moved, and what was made in the entry
 * since (`redact --backup` of a trashed session writes `<file>.bak` there), before the session
 * file. Not the journal, temp files or a lock's leftovers.
 */
function withPartsIn(dir: string, journal: TrashJournal): TrashJournal {
  const file = basename(journal.from);
  let names: string[];
  try {
    names = io.readdirSync(dir) as string[];
  } catch {
    return journal;
  }
  const extra = names
    .filter((n) => n !== JOURNAL && n !== file && !journal.parts.includes(n) && !isTempFileName(n) && !n.startsWith(`${file}.lock`))
    .sort();
  if (extra.length === 0) return journal;
  return { ...journal, parts: [...journal.parts.slice(0, -1), ...extra, file] };
}

function finishPurge(dir: string, journal: TrashJournal): void {
  try {
    for (const name of [...journal.parts].reverse()) io.rmSync(join(dir, name), { recursive: true, force: true });
    removeEntryDir(dir);
  } catch (err) {
    // The journal still says purging: the next lifecycle command finishes it.
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot delete the trash entry ${dir}: ${(err as Error).message}`, {
      path: dir,
      cause: err,
    });
  }
}

/**
 * Finishes or undoes what a crash interrupted, entry by entry: an uncommitted removal (its session
 * file still in place) is undone under the session's lock, a committed one finished; a restore
 * whose session file is back is finished, else undone; a purge is finished. What cannot be decided
 * safely (a live writer, a name taken meanwhile) is left as it is and reported.
 */
export async function recoverTrash(options: FileTrashOptions): Promise<void> {
  const trash = trashDirOf(options.root);
  for (const trashId of namesIn(trash)) {
    const dir = join(trash, trashId);
    const journal = readJournal(dir);
    if (journal === null) {
      // A crash between creating the entry and writing its journal leaves it empty.
      if (namesIn(dir).length === 0 && !exists(join(dir, JOURNAL))) io.rmSync(dir, { recursive: true, force: true });
      else options.onWarning?.({ code: "MOVE_FAILED", message: `Trash entry without a readable trash.json left as it is`, path: dir });
      continue;
    }
    if (journal.state === "trashed") continue;
    // A step mid-way in a live process holds the session's lock: only a dead one's is finished or undone.
    let lock: SessionLock;
    try {
      ensureDir(dirname(journal.from), true);
      lock = await acquireSessionLock(journal.from, { staleMs: options.lockStaleMs, onCompromised: () => {} });
    } catch (err) {
      if (err instanceof TranscriptStoreError && err.code === "SESSION_LOCKED") {
        options.onWarning?.({
          code: "SESSION_LOCKED",
          message: "A trash step in progress (or its session's writer) holds the session",
          path: dir,
        });
        continue;
      }
      throw err;
    }
    try {
      const again = readJournal(dir);
      if (again !== null && again.state !== "trashed") await recoverEntry(trashId, dir, again, options);
    } finally {
      await lock.release();
    }
  }
}

/** Finishes or undoes one entry's interrupted step (its session's lock held). */
async function recoverEntry(trashId: string, dir: string, journal: TrashJournal, options: FileTrashOptions): Promise<void> {
  if (journal.state === "purging") {
    record(options, "purge", trashId, journal);
    finishPurge(dir, journal);
    return;
  }
  const source = dirname(journal.from);
  const file = basename(journal.from);
  if (journal.state === "trashing") {
    if (exists(join(dir, file))) {
      // Committed: bring over what the crash left behind.
      moveRest(source, dir, journal.parts);
      fsyncDir(source);
      writeJournal(dir, { ...journal, state: "trashed" });
    } else undoTrashing(trashId, dir, journal, options);
    return;
  }
  // restoring
  if (!exists(join(dir, file))) {
    record(options, "restore", trashId, journal);
    removeEntryDir(dir);
    return;
  }
  for (const name of journal.parts)
    if (!exists(join(dir, name)) && exists(join(source, name))) io.renameSync(join(source, name), join(dir, name));
  writeJournal(dir, { ...journal, state: "trashed" });
}

/** Undoes an uncommitted removal (the session file still in place), its session's lock held. */
function undoTrashing(trashId: string, dir: string, journal: TrashJournal, options: FileTrashOptions): void {
  const source = dirname(journal.from);
  for (const name of journal.parts) {
    if (!exists(join(dir, name))) continue;
    if (exists(join(source, name))) {
      options.onWarning?.({
        code: "MOVE_FAILED",
        message: `Both ${join(source, name)} and its trashed copy exist: kept both`,
        path: dir,
      });
      return;
    }
    io.renameSync(join(dir, name), join(source, name));
  }
  record(options, "restore", trashId, journal);
  removeEntryDir(dir);
}
