import { createHash } from "node:crypto";
import { basename, dirname, join, resolve } from "node:path";
import { BlobStore } from "../blob/blob-store.ts";
import { BLOB_REF_PREFIX, isBlobRef } from "../blob/blob-ref.ts";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { migrateSession } from "../format/migrate.ts";
import { migrateV2ToV3 } from "../format/migrate-v2-to-v3.ts";
import type { ParsedSession } from "../format/session-parser.ts";
import type { RawRecord, SessionEntry, SessionHeader } from "../format/types.ts";
import { ensureDir, FILE_MODE, fsyncDir, io, tempPathFor, writeFully } from "../io.ts";
import { prepareLine, resolvePrepareOptions, type PrepareOptions, type ResolvedPrepareOptions } from "../prepare/pipeline.ts";
import { cwdBucket, quarantinePathOf, sessionFileName } from "../session/paths.ts";
import { DEFAULT_CHUNK_SIZE, scanSessionFile, SessionFile } from "../session/session-file.ts";
import { acquireSessionLock, type SessionLock } from "../session/session-lock.ts";

export interface MigrateFileOptions extends PrepareOptions {
  /** Store sessions directory that imports go to (ignored with `inPlace`). */
  sessionsDir: string;
  blobsDir: string;
  /** Rewrite the file where it is instead of importing it into the store. */
  inPlace?: boolean;
  /** Keep the original as `<file>.bak` (in place). */
  backup?: boolean;
  /** Plan only: read, report, write nothing. */
  dryRun?: boolean;
  fsync?: boolean;
  chunkSize?: number;
  now?: () => Date;
}

export type MigrateStatus = "migrated" | "imported" | "current" | "planned" | "failed";

/** What happened to one file. */
export interface MigrateFileReport {
  source: string;
  target: string;
  status: MigrateStatus;
  fromVersion: number | null;
  entries: number;
  bytesBefore: number;
  bytesAfter: number;
  imagesExternalized: number;
  blobsNew: number;
  blobsDeduplicated: number;
  malformed: number;
  tornTail: boolean;
  error?: { code: string; message: string };
}

interface Skeleton {
  id: string;
  parentId: string | null;
  firstKeptEntryId?: string;
}

/** Keeps only what migration rules look at, so pass 1 holds ids, not content. */
function skeletonOf(record: RawRecord): RawRecord {
  const out: RawRecord = { type: record.type };
  if ("id" in record) out.id = record.id;
  if ("parentId" in record) out.parentId = record.parentId;
  if ("firstKeptEntryIndex" in record) out.firstKeptEntryIndex = record.firstKeptEntryIndex;
  return out;
}

/** Applies pass-1 migration results (ids, parents, kept id) to a full record, then v2→v3 rules. */
function applySkeleton(record: RawRecord, skeleton: Skeleton, fromVersion: number): SessionEntry {
  if (fromVersion >= 3) return record as SessionEntry;
  let out: RawRecord = record;
  if (fromVersion < 2) {
    out = { type: record.type, id: skeleton.id, parentId: skeleton.parentId, ...record };
    out.id = skeleton.id;
    out.parentId = skeleton.parentId;
    if (skeleton.firstKeptEntryId !== undefined) {
      delete out.firstKeptEntryIndex;
      out.firstKeptEntryId = skeleton.firstKeptEntryId;
    }
  }
  return migrateV2ToV3([{ record: out, lineIndex: 0 }])[0]!.record as SessionEntry;
}

function targetPathFor(source: string, header: SessionHeader, options: MigrateFileOptions): string {
  if (options.inPlace) return source;
  const name = basename(source);
  const fileName = /^\d{4}-\d\d-\d\dT.*_.+\.jsonl$/.test(name) ? name : sessionFileName(new Date(Date.parse(header.timestamp) || 0), header.id.replace(/[^A-Za-z0-9-]/g, "_"));
  return join(options.sessionsDir, cwdBucket(header.cwd || "/"), fileName);
}

function baseReport(source: string): MigrateFileReport {
  return { source, target: source, status: "failed", fromVersion: null, entries: 0, bytesBefore: 0, bytesAfter: 0, imagesExternalized: 0, blobsNew: 0, blobsDeduplicated: 0, malformed: 0, tornTail: false };
}

/** sha256 of a file's bytes, streamed. */
function hashFile(path: string): string | null {
  try {
    const hash = createHash("sha256");
    const fd = io.openSync(path, "r");
    const buf = Buffer.allocUnsafe(DEFAULT_CHUNK_SIZE);
    try {
      for (let n = io.readSync(fd, buf, 0, buf.length, null); n > 0; n = io.readSync(fd, buf, 0, buf.length, null)) hash.update(buf.subarray(0, n));
    } finally {
      io.closeSync(fd);
    }
    return hash.digest("hex");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw err;
  }
}

/**
 * Migrates one session file to v3 through the prepare pipeline, streaming so memory stays bounded
 * whatever the file's size: pass 1 reads only ids, pass 2 writes the new file beside its target,
 * pass 3 re-reads it and checks its bytes and every blob it references; only then is it renamed
 * into place. A file that is already current is left untouched. Never throws for a bad file: the
 * report says what failed.
 */
export async function migrateFile(source: string, options: MigrateFileOptions): Promise<MigrateFileReport> {
  const report = baseReport(resolve(source));
  const locks: SessionLock[] = [];
  try {
    const prepare = resolvePrepareOptions(options);
    const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
    report.bytesBefore = io.statSync(report.source).size;
    const pass1 = scanSessionFile(report.source, { mapRecord: skeletonOf }, chunkSize);
    if (pass1 === null) throw new TranscriptStoreError("SESSION_NOT_FOUND", "File vanished", { path: report.source });
    if (pass1.header === null) throw new TranscriptStoreError("BAD_HEADER", `Not a session file (${pass1.headerProblem ?? "no header"})`, { path: report.source });
    const migrated = migrateSession(pass1.header, pass1.records);
    const fromVersion = migrated.migratedFrom ?? 3;
    report.fromVersion = fromVersion;
    report.entries = migrated.entries.length;
    report.malformed = pass1.malformed.length;
    report.tornTail = pass1.tornTail !== null;
    report.target = targetPathFor(report.source, migrated.header, options);
    if (options.dryRun) {
      report.status = "planned";
      return report;
    }
    if (!options.inPlace) ensureDir(dirname(report.target));
    const lockOptions = { onCompromised: () => {} };
    try {
      locks.push(await acquireSessionLock(report.source, lockOptions));
    } catch (err) {
      // An import only reads its source: a read-only source tree cannot be locked, nor written.
      if (options.inPlace || !(err instanceof TranscriptStoreError) || err.code !== "PERSISTENCE_FAILED") throw err;
    }
    if (report.target !== report.source) locks.push(await acquireSessionLock(report.target, lockOptions));

    const skeletons: Skeleton[] = migrated.entries.map((e) => ({ id: e.id, parentId: e.parentId, ...(typeof e.firstKeptEntryId === "string" && e.type === "compaction" && fromVersion < 2 ? { firstKeptEntryId: e.firstKeptEntryId } : {}) }));
    const blobs = new BlobStore(options.blobsDir, { fsync: options.fsync });
    const result = writeMigrated(report, pass1, migrated.header, skeletons, fromVersion, prepare, blobs, options, chunkSize);
    report.status = result === "current" ? "current" : options.inPlace ? "migrated" : "imported";
    report.bytesAfter = io.statSync(report.target).size;
    return report;
  } catch (err) {
    report.status = "failed";
    report.error = { code: err instanceof TranscriptStoreError ? err.code : (errnoCode(err) ?? "ERROR"), message: (err as Error).message };
    return report;
  } finally {
    for (const lock of locks.reverse()) await lock.release();
  }
}

function writeMigrated(
  report: MigrateFileReport,
  pass1: ParsedSession,
  header: SessionHeader,
  skeletons: Skeleton[],
  fromVersion: number,
  prepare: ResolvedPrepareOptions,
  blobs: BlobStore,
  options: MigrateFileOptions,
  chunkSize: number,
): "written" | "current" {
  const dir = dirname(report.target);
  const temp = tempPathFor(report.target);
  const written = createHash("sha256");
  const seenBlobs = new Set<string>();
  let changed = fromVersion < 3 || pass1.tornTail !== null || pass1.missingFinalNewline || pass1.malformed.length > 0;
  const fd = io.openSync(temp, "wx", FILE_MODE);
  try {
    const emit = (data: Buffer) => {
      writeFully(fd, data);
      written.update(data);
    };
    emit(Buffer.from(`${JSON.stringify(header)}\n`));
    let index = 0;
    const pass2 = scanSessionFile(
      report.source,
      {
        mapRecord: (record, text) => {
          const entry = applySkeleton(record, skeletons[index++]!, fromVersion);
          const prepared = prepareLine(entry, prepare, text);
          if (prepared.entry !== entry) changed = true;
          for (const blob of prepared.blobs) {
            report.imagesExternalized++;
            const put = blobs.putHashedSync(blob.hash, blob.bytes);
            if (!seenBlobs.has(blob.hash)) {
              seenBlobs.add(blob.hash);
              if (put.existed) report.blobsDeduplicated++;
              else report.blobsNew++;
            } else report.blobsDeduplicated++;
          }
          emit(Buffer.from(`${prepared.line}\n`));
          return {};
        },
      },
      chunkSize,
    );
    if (pass2 === null || pass2.records.length !== skeletons.length) throw new TranscriptStoreError("PERSISTENCE_FAILED", "Source changed during migration", { path: report.source });
    io.fsyncSync(fd);
  } catch (err) {
    io.closeSync(fd);
    io.rmSync(temp, { force: true });
    throw err;
  }
  io.closeSync(fd);
  const digest = written.digest("hex");
  try {
    if (!changed && report.target === report.source) return "current";
    if (report.target !== report.source && hashFile(report.target) === digest) return "current";
    verifyWritten(temp, digest, skeletons.length, blobs, chunkSize);
    const lost = [...pass1.malformed];
    if (pass1.tornTail !== null) lost.push({ line: pass1.linesRead, offset: pass1.tornTail.offset, reason: "torn tail (unterminated final line)", bytes: pass1.tornTail.bytes });
    if (lost.length > 0) new SessionFile(report.target === report.source ? report.source : report.target, { fsync: true, now: options.now ?? (() => new Date()) }).quarantine(lost);
    if (options.backup && options.inPlace) {
      const bak = `${report.source}.bak`;
      io.rmSync(bak, { force: true });
      io.copyFileSync(report.source, bak);
    }
    io.renameSync(temp, report.target);
    fsyncDir(dir);
    return "written";
  } finally {
    io.rmSync(temp, { force: true });
  }
}

/** Pass 3: the bytes on disk are the bytes written, every line parses, every blob re-hashes. */
function verifyWritten(temp: string, digest: string, entries: number, blobs: BlobStore, chunkSize: number): void {
  if (hashFile(temp) !== digest) throw new TranscriptStoreError("PERSISTENCE_FAILED", "Written file does not read back identically", { path: temp });
  const checked = new Set<string>();
  const parsed = scanSessionFile(
    temp,
    {
      mapRecord: (_record, text) => {
        for (let at = text.indexOf(BLOB_REF_PREFIX); at !== -1; at = text.indexOf(BLOB_REF_PREFIX, at + 1)) {
          const ref = text.slice(at, at + BLOB_REF_PREFIX.length + 64);
          if (!isBlobRef(ref) || checked.has(ref)) continue;
          checked.add(ref);
          if (blobs.getSync(ref, { verify: true }) === null) throw new TranscriptStoreError("BLOB_MISSING", `Blob ${ref} missing after write`, { path: blobs.pathOf(ref) });
        }
        return {};
      },
    },
    chunkSize,
  );
  if (parsed === null || parsed.header === null || parsed.malformed.length > 0 || parsed.tornTail !== null || parsed.records.length !== entries) {
    throw new TranscriptStoreError("PERSISTENCE_FAILED", "Written file does not verify", { path: temp });
  }
}
