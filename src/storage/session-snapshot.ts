import { blobHashOf, blobRefsIn } from "../blob/blob-ref.ts";
import { prepareLineWarned } from "../prepare/prepare-warned.ts";
import { TranscriptStoreError } from "../errors.ts";
import type { SessionEntry, SessionHeader } from "../format/types.ts";
import type { ResolvedPrepareOptions } from "../prepare/pipeline.ts";
import type { StoreWarning } from "../errors.ts";
import type { SessionRelation } from "./session-relation.ts";

/**
 * Bytes read on demand: their length, and a fresh read of them in pieces on each `open()` (a blob, an
 * artifact file): never one buffer of the whole unless its source is one.
 */
export interface SnapshotBytes {
  size: number;
  open(): AsyncIterable<Buffer>;
}

/** One file of a session's artifacts: its path inside the artifacts directory (`/`-separated), its bytes. */
export interface SnapshotArtifact extends SnapshotBytes {
  name: string;
}

/** `bytes` (already in memory) as `SnapshotBytes`. */
export function bytesSource(bytes: Buffer): SnapshotBytes {
  return {
    size: bytes.length,
    open: async function* () {
      yield bytes;
    },
  };
}

/** All of `source` in one buffer (for a consumer that needs it whole: a small blob, a test). */
export async function readAllBytes(source: SnapshotBytes): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of source.open()) parts.push(part);
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/**
 * One session as any backend can hand it out and take it in (`StorageBackend.exportSession` /
 * `importSession`): what moves when a session goes from one store to another. Everything is read
 * on demand (async iterables), so a large session never has to sit in memory as one string.
 */
export interface SessionSnapshot {
  header: SessionHeader;
  /** The header line exactly as stored (no `\n`). */
  headerLine: string;
  /** The entry lines exactly as stored, in order, without their `\n` (a damaged line as it is). */
  lines(): AsyncIterable<string>;
  /** The quarantine records kept beside the session (a file store's `.quarantine.jsonl` lines, no `\n`). */
  quarantine(): AsyncIterable<string>;
  /** The session's artifact files. */
  artifacts(): AsyncIterable<SnapshotArtifact>;
  /** The sha256 hashes of the blobs its lines reference (each once). */
  blobHashes(): AsyncIterable<string>;
  /** The bytes of a blob its lines reference (read on demand, unverified: a reader checks the sha256); null when the source lacks it. */
  blob(hash: string): Promise<SnapshotBytes | null>;
  /** Damaged lines of the source not carried (they stay in the source, reported); absent: none. */
  damaged?: number;
}

/**
 * What an import did: `created` (the store had no session of that id), `unchanged` (it held the
 * same, or more: `relation` says which), `appended` (it held a beginning of it: the rest was
 * appended). A conflict (`diverged`) is thrown as `IMPORT_CONFLICT`, nothing written.
 */
export type ImportStatus = "created" | "unchanged" | "appended";

export interface ImportOutcome {
  status: ImportStatus;
  id: string;
  /** Where the session now lives: its file, or `<database>#<id>`. */
  location: string;
  /** How the incoming session related to the copy the store held (`relateSessions`); null when there was none. */
  relation: SessionRelation | null;
  /**
   * What became of a header that differs from the store copy's (the lines agreeing): `kept` (the
   * store's stays: the one rule), or `updated` where a backend knows which side changed since the
   * last import (PostgreSQL keeps the header an import brought) and the source's is the newer.
   */
  header: "same" | "updated" | "kept";
  /** Entry lines in the incoming session. */
  lines: number;
}

/** The conflict refusal, with nothing written. */
export function importConflict(id: string, location: string): TranscriptStoreError {
  return new TranscriptStoreError(
    "IMPORT_CONFLICT",
    `session ${id} already exists in the store with other content; nothing imported (${location})`,
    { path: location },
  );
}

async function* fromArray<T>(items: readonly T[]): AsyncIterable<T> {
  yield* items;
}

/**
 * A snapshot of a session given as entries (an NDJSON import, a file read through its migration):
 * each entry goes through the prepare pipeline as a store would write it (images become blobs,
 * carried in the snapshot). `bytesOf` gives blobs the entries already refer to. `quarantine`: raw
 * quarantine records to carry.
 */
export function snapshotOfEntries(
  header: SessionHeader,
  entries: readonly SessionEntry[],
  prepare: ResolvedPrepareOptions,
  options: {
    bytesOf?: (hash: string) => Buffer | null;
    quarantine?: readonly string[];
    warn?: (w: StoreWarning) => void;
  } = {},
): SessionSnapshot {
  const lines: string[] = [];
  const carried = new Map<string, Buffer>();
  const hashes = new Set<string>();
  for (const entry of entries) {
    const prepared = prepareLineWarned(entry, prepare, options.warn);
    for (const b of prepared.blobs) carried.set(b.hash, b.bytes);
    if (prepared.mayHoldRefs) for (const hash of hashesIn(prepared.line)) hashes.add(hash);
    lines.push(prepared.line);
  }
  return {
    header,
    headerLine: JSON.stringify(header),
    lines: () => fromArray(lines),
    quarantine: () => fromArray(options.quarantine ?? []),
    artifacts: () => fromArray<SnapshotArtifact>([]),
    blobHashes: () => fromArray([...hashes]),
    blob: async (hash) => {
      const bytes = carried.get(hash) ?? options.bytesOf?.(hash) ?? null;
      return bytes === null ? null : bytesSource(bytes);
    },
  };
}

/** The blob hashes a stored line names (each once). */
export function hashesIn(line: string): string[] {
  return [...new Set(blobRefsIn(line))];
}

/** Every blob hash the lines of `snapshot` name, each once (for a backend that derives them from its lines). */
export async function* hashesOfLines(lines: AsyncIterable<string>): AsyncIterable<string> {
  const seen = new Set<string>();
  for await (const line of lines) {
    for (const hash of hashesIn(line)) {
      if (seen.has(hash)) continue;
      seen.add(hash);
      yield hash;
    }
  }
}

/**
 * A blob of the snapshot in one buffer (for a store that takes a blob's bytes whole), checked
 * against its hash: other bytes are `BLOB_CORRUPT`, nothing written; null when the snapshot lacks it.
 */
export async function verifiedSnapshotBlob(snapshot: SessionSnapshot, hash: string): Promise<Buffer | null> {
  const source = await snapshot.blob(hash);
  if (source === null) return null;
  const bytes = await readAllBytes(source);
  if (blobHashOf(bytes) !== hash) {
    throw new TranscriptStoreError("BLOB_CORRUPT", `Blob ${hash} of the import holds other bytes (their sha256 differs); nothing imported`);
  }
  return bytes;
}
