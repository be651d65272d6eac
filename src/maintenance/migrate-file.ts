import { createHash } from "node:crypto";
import { constants, mkdtempSync, type Stats } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { registerReferrer, referrerFor } from "../blob/blob-referrers.ts";
import { BlobStore } from "../blob/blob-store.ts";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { headerVersion, migrateSession } from "../format/migrate.ts";
import { hasKeptIndex, V1ToV2Chain, withKeptId } from "../format/migrate-v1-to-v2.ts";
import { migrateV2ToV3 } from "../format/migrate-v2-to-v3.ts";
import { linesToQuarantine, type ParsedSession } from "../format/session-parser.ts";
import type { RawRecord, SessionEntry, SessionHeader } from "../format/types.ts";
import { ensureDir, io } from "../io.ts";
import { prepareLine, resolvePrepareOptions, type PrepareOptions, type ResolvedPrepareOptions } from "../prepare/pipeline.ts";
import { cwdBucket, detectLayout, sessionFileName, type SessionLayout } from "../session/paths.ts";
import { backupSessionFile, SessionFile, SessionFileDraft } from "../session/session-file.ts";
import { DEFAULT_CHUNK_SIZE, readSessionHeader, scanSessionFile } from "../session/session-file-reader.ts";
import { acquireSessionLock, type SessionLock } from "../session/session-lock.ts";
import { compareImport, storeCopyElsewhere } from "./existing-target.ts";
import { catchUpAppends } from "./late-appends.ts";
import { assertUnchanged, verifyWritten } from "./migrate-checks.ts";
import { addCounters, baseReport, zeroCounters } from "./migrate-report.ts";
import type { MigrateCounters, MigrateFileReport } from "./migrate-report.ts";

export interface MigrateFileOptions extends PrepareOptions {
  /** Store sessions directory that imports go to (ignored with `inPlace`). */
  sessionsDir: string;
  blobsDir: string;
  /** Bucket naming of imports into `sessionsDir`. @default detected from the tree, else "omp" */
  layout?: SessionLayout;
  /** Rewrite the file where it is instead of importing it into the store. */
  inPlace?: boolean;
  /** Keep the original as `<file>.bak` (in place; `<file>.2.bak`, … when earlier backups exist). */
  backup?: boolean;
  /** Plan only: take the same road, report what the real run would do; write nothing to the store or the source. */
  dryRun?: boolean;
  /** A dry run's blobs that earlier files of the same run would have stored (shared across its calls). */
  plannedBlobs?: Set<string>;
  fsync?: boolean;
  chunkSize?: number;
  now?: () => Date;
}

export type { MigrateFileReport, MigrateStatus } from "./migrate-report.ts";

/** The v1/v2 → v3 rules for one record, in file order, as `writeMigrated` streams it. */
type Transform = (record: RawRecord, lineIndex: number) => SessionEntry;

/** Thrown by a one-pass transform that met what only two passes can migrate exactly. */
class NeedsTwoPasses extends Error {}

/** Keeps only what migration rules look at, so pass 1 holds ids, not content. */
function skeletonOf(record: RawRecord): RawRecord {
  const out: RawRecord = { type: record.type };
  if ("id" in record) out.id = record.id;
  if ("parentId" in record) out.parentId = record.parentId;
  if ("firstKeptEntryIndex" in record) out.firstKeptEntryIndex = record.firstKeptEntryIndex;
  return out;
}

const toV3 = (record: RawRecord) => migrateV2ToV3([{ record, lineIndex: 0 }])[0]!.record as SessionEntry;

/**
 * One pass: v3 records as they are, v2 records through v2→v3, v1 records through the v1 chain as
 * they stream by. A v1 file whose records already carry ids, a v2 file that repeats an id, or a
 * compaction that keeps an entry after itself, needs the whole file's ids first: `NeedsTwoPasses`.
 */
function onePassTransform(header: SessionHeader, fromVersion: number): Transform {
  if (fromVersion >= 3) return (record) => record as SessionEntry;
  if (fromVersion === 2) {
    // A repeated id gets a fresh one derived with the whole file's ids in view: two passes.
    const seen = new Set<unknown>();
    return (record) => {
      if (seen.has(record.id)) throw new NeedsTwoPasses();
      seen.add(record.id);
      return toV3(record);
    };
  }
  const chain = new V1ToV2Chain(header.id, new Set());
  return (record, lineIndex) => {
    if ("id" in record) throw new NeedsTwoPasses();
    let next = chain.assign(record, lineIndex);
    if (hasKeptIndex(next)) {
      const kept = chain.keptId(next.firstKeptEntryIndex);
      if (kept === undefined) throw new NeedsTwoPasses();
      next = withKeptId(next, kept);
    }
    return toV3(next);
  };
}

/** Two passes: ids, parents and kept ids come from a first pass over the whole file (skeletons only). */
function twoPassTransform(migrated: SessionEntry[]): Transform {
  let index = 0;
  return (record) => {
    const done = migrated[index++]!;
    const out: RawRecord = { type: record.type, id: done.id, parentId: done.parentId, ...record };
    out.id = done.id;
    out.parentId = done.parentId;
    if ("firstKeptEntryIndex" in record && typeof done.firstKeptEntryId === "string") {
      delete out.firstKeptEntryIndex;
      out.firstKeptEntryId = done.firstKeptEntryId;
    }
    return toV3(out);
  };
}

function targetPathFor(source: string, header: SessionHeader, options: MigrateFileOptions): string {
  if (options.inPlace) return source;
  const name = basename(source);
  const fileName = /^\d{4}-\d\d-\d\dT.*_.+\.jsonl$/.test(name)
    ? name
    : sessionFileName(new Date(Date.parse(header.timestamp) || 0), header.id);
  const layout = options.layout ?? detectLayout(options.sessionsDir) ?? "omp";
  return join(options.sessionsDir, cwdBucket(header.cwd || "/", layout), fileName);
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
    const header = readSessionHeader(report.source);
    if (header === null) {
      // Files whose header needs a closer look take the careful two-pass road.
      const pass1 = firstPass(report.source, chunkSize);
      const migrated = migrateSession(pass1.header, pass1.records);
      report.fromVersion = migrated.migratedFrom ?? 3;
      report.entries = migrated.entries.length;
      report.malformed = pass1.malformed.length;
      report.linesSplit = pass1.repaired.length;
      report.tornTail = pass1.tornTail !== null;
      report.target = targetPathFor(report.source, migrated.header, options);
      await lockFor(report, options, locks);
      return finish(
        report,
        options,
        writeMigrated(
          report,
          migrated.header,
          twoPassTransform(migrated.entries),
          report.fromVersion,
          prepare,
          new BlobStore(options.blobsDir, { fsync: options.fsync && !options.dryRun }),
          options,
          chunkSize,
        ),
      );
    }
    const fromVersion = headerVersion(header);
    const newHeader = migrateSession(header, []).header;
    report.fromVersion = fromVersion;
    report.target = targetPathFor(report.source, newHeader, options);
    await lockFor(report, options, locks);
    const blobs = new BlobStore(options.blobsDir, { fsync: options.fsync && !options.dryRun });
    let outcome;
    try {
      outcome = writeMigrated(report, newHeader, onePassTransform(header, fromVersion), fromVersion, prepare, blobs, options, chunkSize);
    } catch (err) {
      if (!(err instanceof NeedsTwoPasses)) throw err;
      const pass1 = firstPass(report.source, chunkSize);
      const migrated = migrateSession(pass1.header, pass1.records);
      outcome = writeMigrated(report, migrated.header, twoPassTransform(migrated.entries), fromVersion, prepare, blobs, options, chunkSize);
    }
    return finish(report, options, outcome);
  } catch (err) {
    const code = err instanceof TranscriptStoreError ? err.code : (errnoCode(err) ?? "ERROR");
    report.status = code === "IMPORT_CONFLICT" ? "conflict" : "failed";
    report.error = { code, message: (err as Error).message };
    return report;
  } finally {
    for (const lock of locks.reverse()) await lock.release();
  }
}

/** Pass 1 of the two-pass road: skeleton records only. Throws for a file that is not a session. */
function firstPass(source: string, chunkSize: number): ParsedSession & { header: SessionHeader } {
  const pass1 = scanSessionFile(source, { mapRecord: skeletonOf }, chunkSize);
  if (pass1 === null) throw new TranscriptStoreError("SESSION_NOT_FOUND", "File vanished", { path: source });
  if (pass1.header === null)
    throw new TranscriptStoreError("BAD_HEADER", `Not a session file (${pass1.headerProblem ?? "no header"})`, { path: source });
  return pass1 as ParsedSession & { header: SessionHeader };
}

/**
 * Takes the source's lock (and the target's, for an import). An import whose session the store
 * holds in another cwd's bucket (the source moved since) is `IMPORT_CONFLICT`: a second copy would
 * be written otherwise; `mv` moves the store copy.
 */
async function lockFor(report: MigrateFileReport, options: MigrateFileOptions, locks: SessionLock[]): Promise<void> {
  const elsewhere = options.inPlace || io.existsSync(report.target) ? null : storeCopyElsewhere(options.sessionsDir, report.target);
  if (elsewhere !== null) {
    throw new TranscriptStoreError(
      "IMPORT_CONFLICT",
      `The store holds this session at ${elsewhere}, in another cwd than the source's header names; ` +
        "nothing imported (move the store copy with `mv` to bring it across)",
      { path: elsewhere },
    );
  }
  // A dry run writes nothing and takes no lock: it only predicts.
  if (options.dryRun) return;
  if (!options.inPlace) ensureDir(dirname(report.target), options.fsync === true);
  const lockOptions = { onCompromised: () => {} };
  try {
    locks.push(await acquireSessionLock(report.source, lockOptions));
  } catch (err) {
    // An import only reads its source: a read-only source tree cannot be locked, nor written.
    if (options.inPlace || !(err instanceof TranscriptStoreError) || err.code !== "PERSISTENCE_FAILED") throw err;
  }
  if (report.target !== report.source) locks.push(await acquireSessionLock(report.target, lockOptions));
  // The migrated file will reference the blob store: the store learns where it lives first.
  registerReferrer(options.blobsDir, referrerFor(report.target, options.sessionsDir));
}

interface WriteOutcome {
  result: "written" | "updated" | "current" | "continued" | "conflict";
  parsed: ParsedSession;
  /** What the write pass counted (the other counters at zero). */
  counts: MigrateCounters;
  /** Bytes of the migrated file as written (a dry run's prediction of the target's size). */
  bytesWritten: number;
}

function finish(report: MigrateFileReport, options: MigrateFileOptions, outcome: WriteOutcome): MigrateFileReport {
  if (outcome.result !== "written" && outcome.result !== "updated") {
    // Nothing was written: no image was externalized by this run, no blob gained a reference.
    outcome.counts.imagesExternalized = 0;
    outcome.counts.blobsDeduplicated = 0;
  }
  addCounters(report, outcome.counts);
  report.entries = outcome.parsed.records.length;
  report.malformed = outcome.parsed.malformed.length;
  report.linesSplit = outcome.parsed.repaired.length;
  report.tornTail = outcome.parsed.tornTail !== null;
  const writes = outcome.result === "written" || outcome.result === "updated";
  report.status =
    options.dryRun && writes ? "planned" : outcome.result === "written" ? (options.inPlace ? "migrated" : "imported") : outcome.result;
  report.bytesAfter = options.dryRun && writes ? outcome.bytesWritten : io.statSync(report.target).size;
  if (outcome.result === "conflict") {
    // True on a first import as on a re-import: the two copies diverged, whichever way they came to.
    const message =
      "The store holds this session and it differs from the source: neither holds all of the other's lines under the same header; " +
      "the store copy is left untouched, nothing imported";
    report.error = { code: "IMPORT_CONFLICT", message };
  }
  return report;
}

/**
 * Streams the source through `transform` and the pipeline into a temp file beside the target,
 * storing blobs as it goes; then (unless nothing changed) verifies the temp file, quarantines what
 * could not be kept, and renames it into place.
 */
function writeMigrated(
  report: MigrateFileReport,
  header: SessionHeader,
  transform: Transform,
  fromVersion: number,
  prepare: ResolvedPrepareOptions,
  blobs: BlobStore,
  options: MigrateFileOptions,
  chunkSize: number,
): WriteOutcome {
  const written = createHash("sha256");
  const seenBlobs = new Set<string>();
  /** Blobs this run wrote or re-hashed, with their sizes. */
  const fresh = new Map<string, number>();
  const counts = zeroCounters();
  let changed = fromVersion < 3;
  let parsed: ParsedSession | null;
  // Only cooperating writers take the lock: the file's identity before the scan proves nobody
  // (pi, an editor) wrote to it before a rewrite in place (or of a store file) replaces it.
  const before = report.target === report.source ? io.statSync(report.source) : null;
  // A dry run writes its draft outside the store (removed below) and stores no blob.
  const dryDir = options.dryRun ? mkdtempSync(join(tmpdir(), "transcript-store-dry-run-")) : null;
  const draft =
    dryDir === null ? SessionFileDraft.begin(report.target) : SessionFileDraft.begin(report.target, join(dryDir, "draft.jsonl"));
  const temp = draft.path;
  let bytesWritten = 0;
  try {
    const emit = (data: Buffer) => {
      draft.write(data);
      written.update(data);
      bytesWritten += data.length;
    };
    emit(Buffer.from(`${JSON.stringify(header)}\n`));
    parsed = scanSessionFile(
      report.source,
      {
        mapRecord: (record, text, lineIndex) => {
          const entry = transform(record, lineIndex);
          const prepared = prepareLine(entry, prepare, text);
          if (prepared.entry !== entry) changed = true;
          counts.imagesKeptInline += prepared.imagesKeptInline;
          for (const blob of prepared.blobs) {
            counts.imagesExternalized++;
            const put = dryDir === null ? blobs.putHashedSync(blob.hash, blob.bytes) : plannedPut(blobs, blob.hash, options.plannedBlobs);
            // The put itself proves a blob already there (size, then bytes) and heals it if it went bad.
            if (put.repaired) counts.blobsRepaired++;
            fresh.set(blob.hash, blob.bytes.length);
            if (!seenBlobs.has(blob.hash) && !put.existed && !put.repaired) counts.blobsNew++;
            else counts.blobsDeduplicated++;
            seenBlobs.add(blob.hash);
          }
          emit(Buffer.from(`${prepared.line}\n`));
          return {};
        },
      },
      chunkSize,
    );
    if (parsed !== null && parsed.header === null && parsed.headerProblem !== null) {
      throw new TranscriptStoreError("BAD_HEADER", `Not a session file (${parsed.headerProblem})`, { path: report.source });
    }
    if (parsed === null || parsed.header === null)
      throw new TranscriptStoreError("PERSISTENCE_FAILED", "Source changed during migration", { path: report.source });
    draft.sync();
  } catch (err) {
    draft.discard();
    if (dryDir !== null) io.rmSync(dryDir, { recursive: true, force: true });
    throw err;
  }
  draft.close();
  const digest = written.digest("hex");
  const outcome = (result: WriteOutcome["result"]): WriteOutcome => ({ result, parsed: parsed!, counts, bytesWritten });
  let held: number | null = null;
  try {
    if (parsed.tornTail !== null || parsed.missingFinalNewline || parsed.malformed.length > 0 || parsed.repaired.length > 0) changed = true;
    if (!changed && report.target === report.source) return outcome("current");
    let result: WriteOutcome["result"] = "written";
    let storeCopy: Stats | null = null;
    if (report.target !== report.source && io.existsSync(report.target)) {
      // Never rename over store content: only a store copy that the import fully contains goes.
      storeCopy = io.statSync(report.target);
      const relation = compareImport(temp, report.target, chunkSize);
      if (relation === "same") return outcome("current");
      if (relation === "storeAhead") return outcome("continued");
      if (relation === "diverged") return outcome("conflict");
      result = "updated";
    }
    if (dryDir !== null) return outcome(result);
    verifyWritten(temp, digest, parsed.records.length, blobs, fresh, chunkSize);
    // Held across the rename: what a plain writer appends to the old file meanwhile is brought over.
    if (before !== null) held = openHeld(report.source, before);
    if (before !== null) assertUnchanged(report.source, before, parsed.bytesRead);
    if (storeCopy !== null) assertUnchanged(report.target, storeCopy, storeCopy.size);
    const lost = linesToQuarantine(parsed);
    if (lost.length > 0) new SessionFile(report.target, { fsync: true, now: options.now ?? (() => new Date()) }).quarantine(lost);
    if (options.backup && options.inPlace) report.backup = backupSessionFile(report.source);
    draft.commit(true);
    if (held !== null) counts.linesCaughtUp = catchUpAppends(held, parsed.bytesRead, report.target);
    return outcome(result);
  } finally {
    if (held !== null) io.closeSync(held);
    draft.discard();
    if (dryDir !== null) io.rmSync(dryDir, { recursive: true, force: true });
  }
}

/** What a dry run's put would find: a blob stored already, or by an earlier file of the run. */
function plannedPut(blobs: BlobStore, hash: string, planned = new Set<string>()): { existed: boolean; repaired: false } {
  const existed = planned.has(hash) || blobs.hasSync(hash);
  planned.add(hash);
  return { existed, repaired: false };
}

/** A read descriptor on the file scanned as `before` (same inode), else the file changed: refused. */
function openHeld(path: string, before: Stats): number {
  const fd = io.openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  if (io.fstatSync(fd).ino !== before.ino) {
    io.closeSync(fd);
    throw new TranscriptStoreError("PERSISTENCE_FAILED", "The file was replaced while it was migrated; it is left as it is", { path });
  }
  return fd;
}
