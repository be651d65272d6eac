import type { BlobStore } from "../blob/blob-store.ts";
import { BLOB_REF_PREFIX } from "../blob/blob-ref.ts";
import { TranscriptStoreError, type StoreWarning } from "../errors.ts";
import type { LoadReport } from "../format/load-report.ts";
import { migrateSession } from "../format/migrate.ts";
import type { RawRecord, SessionEntry, SessionHeader } from "../format/types.ts";
import type { LineCut } from "../format/session-parser.ts";
import { cutImagePayloads, restoreCuts } from "../prepare/cut-payloads.ts";
import { externalizeImages } from "../prepare/externalize-images.ts";
import type { InlineImageSources } from "./inline-image-sources.ts";
import { KeyedBlobs } from "../blob/keyed-blobs.ts";
import { keyedBlobCipherOf, mentionsKeyedRef, openLineChecked } from "../crypto/keyed-lines.ts";
import { cipherFor, type LineCipher, type StoreKey } from "../crypto/line-cipher.ts";
import { rehydrateValue } from "./rehydrate.ts";
import { externalizeGiantLines } from "./giant-lines.ts";
import { scanSessionFile, type ScannedSession } from "./session-file-reader.ts";
import type { RehydrateMode } from "./rehydrate.ts";

export interface LoadedSession {
  header: SessionHeader;
  entries: SessionEntry[];
  parsed: ScannedSession;
  report: LoadReport;
  /** Some line of the file holds a blob ref (tracked for writable opens: they register with the store). */
  hasBlobRefs: boolean;
}

export interface LoadSessionOptions {
  rehydrate: RehydrateMode;
  blobThreshold: number;
  chunkSize: number;
  blobs: BlobStore;
  /** Lazy opens record here which file line still holds each image they left out of memory. */
  sources: InlineImageSources;
  warn: (warning: StoreWarning) => void;
  /** The caller holds the lock: a line too large for one string may be rewritten (giant images go to the blob store). */
  writable?: boolean;
  fsync?: boolean;
  /** The store key for an encrypted session (its header says so): `KEY_REQUIRED` without it. */
  key?: StoreKey | null;
}

/**
 * Reads a session file: chunked scan, per-record image handling (eager: refs resolved back;
 * lazy: inline images replaced by refs in memory so memory follows the text, not the images;
 * nothing is written: the refs are resolved from the file's own line until a write stores them),
 * then migration to the current version. Returns null for an absent or empty file; throws
 * `BAD_HEADER` for a file whose first line is not a session header.
 */
export function loadSessionFile(path: string, options: LoadSessionOptions): LoadedSession | null {
  const { blobs, warn } = options;
  const eager = options.rehydrate === "eager";
  // Whether the file holds refs matters only to a writer (it registers with the blob store).
  let hasBlobRefs = false;
  // Lazy: large image payloads are cut out of a line's bytes before it is parsed and come back as
  // refs (decoded into a reused buffer and hashed, never parsed or kept as strings); `cutHashes`
  // holds the refs of the line.
  let cutHashes: string[] = [];
  const cutLine = (bytes: Buffer): LineCut | null => {
    cutHashes = [];
    const cuts = cutImagePayloads(bytes, options.blobThreshold);
    if (cuts === null) return null;
    return {
      bytes: cuts.bytes,
      restore: (record) => {
        try {
          const restored = restoreCuts(record, cuts);
          if (restored !== null) cutHashes = restored.hashes;
          return restored?.value ?? null;
        } catch (err) {
          if (err instanceof RangeError) return null; // too deep to walk: the whole line is parsed and reported as today
          throw err;
        }
      },
    };
  };
  // An encrypted session's cipher (the header's), set by its first entry line.
  let cipher: LineCipher | null | undefined;
  // Its images are keyed blobs, read back through decryption (keyed-lines.ts).
  let keyed: KeyedBlobs | null = null;
  const mapRecord = (record: RawRecord, text: string, _lineIndex: number, offset: number, length: number, cut: boolean) => {
    // One substring search per line serves both the eager rehydration and the ref tracking.
    const hasRef =
      eager || (options.writable === true && !hasBlobRefs) ? mentionsBlobRef(text) || (keyed !== null && mentionsKeyedRef(text)) : false;
    if (hasRef) hasBlobRefs = true;
    try {
      if (eager) return hasRef ? rehydrateValue(record, blobs, warn, keyed) : record;
      if (cut) for (const hash of cutHashes) options.sources.add(hash, offset, length);
      // A cut line held payloads of at least the threshold: its other payloads are looked at as the whole line's would be.
      const images = (cut || text.length >= options.blobThreshold) && text.includes("image");
      return images ? externalizeOnLoad(record, offset, length, options) : record;
    } catch (err) {
      // A pathologically deep value overflows the walkers: keep it exactly as read.
      if (!(err instanceof RangeError)) throw err;
      warn({ code: "IMAGE_NOT_EXTERNALIZED", message: `Entry left as read: ${err.message}`, path });
      return record;
    }
  };
  // An encrypted session's lines are decrypted before anything looks at them (the cipher is the header's).
  const openRecord = (record: RawRecord, header: SessionHeader, ordinal: number): RawRecord => {
    if (cipher === undefined) {
      cipher = withPath(path, () => cipherFor(header, options.key ?? null));
      if (cipher !== null) keyed = new KeyedBlobs(blobs, keyedBlobCipherOf(options.key!));
    }
    if (cipher !== null) return withPath(path, () => openLineChecked(cipher!, record, ordinal));
    // A header stripped of its encryption must not turn the session plain (later appends would be written in clear).
    if (record.type === "encrypted") {
      throw new TranscriptStoreError("DECRYPT_FAILED", `Entry line ${ordinal} is encrypted but the header is not; nothing is served`, {
        path,
      });
    }
    return record;
  };
  const parserOptions = eager ? { mapRecord, openRecord } : { mapRecord, cutLine, openRecord };
  let parsed = scanSessionFile(path, parserOptions, options.chunkSize);
  if (parsed === null) return null;
  // A header-only encrypted session is refused without its key too (nothing of it is rewritten).
  const scannedHeader = parsed.header;
  if (scannedHeader !== null && cipher === undefined) withPath(path, () => cipherFor(scannedHeader, options.key ?? null));
  if (options.writable && parsed.header !== null && parsed.malformed.some((m) => m.length !== undefined)) {
    // Lines too large for one string: a giant image in one is streamed to the blob store and the
    // line rewritten with its ref; anything else stays a reported problem, its bytes on disk.
    if (externalizeGiantLines(path, parsed.malformed, blobs, options.fsync ?? false)) {
      options.sources.clear(); // the file was rewritten: line offsets are read again
      parsed = scanSessionFile(path, parserOptions, options.chunkSize);
    }
    if (parsed === null) return null;
  }
  if (parsed.header === null) {
    if (parsed.headerProblem === null && parsed.records.length === 0 && parsed.malformed.length === 0 && parsed.tornTail === null)
      return null;
    throw new TranscriptStoreError("BAD_HEADER", `Not a session file (${parsed.headerProblem ?? "no header"}); it is left untouched`, {
      path,
    });
  }
  const migrated = migrateSession(parsed.header, parsed.records);
  const report: LoadReport = {
    linesRead: parsed.linesRead,
    entries: migrated.entries.length,
    malformed: parsed.malformed.map(({ line, offset, reason }) => ({ line, offset, reason })),
    repaired: parsed.repaired.map(({ line, offset, reason }) => ({ line, offset, reason })),
    tornTail: parsed.tornTail !== null,
    nulRuns: parsed.nulRuns,
    migratedFrom: migrated.migratedFrom,
    bytesRead: parsed.bytesRead,
  };
  if (report.malformed.length > 0) {
    warn({
      code: "MALFORMED_LINES",
      message:
        `${report.malformed.length} malformed line(s) preserved ` +
        `(first at line ${report.malformed[0]!.line}: ${report.malformed[0]!.reason})`,
      path,
    });
  }
  if (report.repaired.length > 0) {
    warn({
      code: "GLUED_RECORDS_SPLIT",
      message:
        `${report.repaired.length} line(s) held several records glued together; ` +
        `each was read (first at line ${report.repaired[0]!.line})`,
      path,
    });
  }
  if (parsed.nulRuns > 0) warn({ code: "NUL_BYTES_SKIPPED", message: `${parsed.nulRuns} run(s) of NUL bytes skipped`, path });
  return { header: migrated.header, entries: migrated.entries, parsed, report, hasBlobRefs };
}

/** Lines at least this long are mostly long strings (images, tool output), where a colon is rare. */
const LONG_LINE = 8 * 1024;
const REF_TAIL = BLOB_REF_PREFIX.slice(BLOB_REF_PREFIX.indexOf(":"));

/**
 * `text.includes(BLOB_REF_PREFIX)`, cheaper on long lines: a search led by "b" crawls through base64
 * (every 64th byte is a "b"), one led by ":" skips it at memchr speed (base64 has no colon), and
 * only a line holding ":sha256:" is searched for the whole prefix. Dense JSON is full of colons, so
 * short lines are searched for the prefix directly.
 */
function mentionsBlobRef(text: string): boolean {
  if (text.length < LONG_LINE) return text.includes(BLOB_REF_PREFIX);
  return text.includes(REF_TAIL) && text.includes(BLOB_REF_PREFIX);
}

function externalizeOnLoad(record: RawRecord, offset: number, length: number, options: LoadSessionOptions): RawRecord {
  const { value, blobs, keptInline } = externalizeImages(record, options.blobThreshold);
  if (keptInline > 0)
    options.warn({ code: "IMAGE_NOT_EXTERNALIZED", message: `${keptInline} image payload(s) are not base64; kept inline` });
  for (const blob of blobs) options.sources.add(blob.hash, offset, length);
  return value;
}

/** `fn()`, its coded error given the session's path. */
function withPath<T>(path: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof TranscriptStoreError && err.path === undefined) throw new TranscriptStoreError(err.code, err.message, { path });
    throw err;
  }
}
