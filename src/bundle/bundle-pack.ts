import { sharingRedactorOf } from "../storage/sharing-key.ts";
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import tar from "tar-stream";
import { TranscriptStoreError } from "../errors.ts";
import { describeCounts } from "../prepare/redact-secrets.ts";
import type { SharingRedactionOptions } from "../session/redact-for-sharing.ts";
import { RedactionTally, redactSnapshot } from "./bundle-redact.ts";
import { type BundleCodec, compressed } from "./bundle-codec.ts";
import {
  resolveSessionManagerOptions,
  type ResolvedSessionManagerOptions,
  type SessionManagerOptions,
} from "../session/session-options.ts";
import { backendOf } from "../storage/backends.ts";
import { hashesIn, type SessionSnapshot, type SnapshotBytes } from "../storage/session-snapshot.ts";
import {
  artifactMember,
  blobMember,
  BUNDLE_FORMAT,
  BUNDLE_VERSION,
  type BundleManifest,
  headerMember,
  linesMember,
  MANIFEST_NAME,
  type ManifestMember,
  type ManifestSession,
  quarantineMember,
  sessionDir,
} from "./bundle-manifest.ts";

/** Options of `bundle`: where the sessions are (the file tree's directories or a `store`), and `onWarning`. */
export interface BundleOptions extends SessionManagerOptions {
  /**
   * A bundle is shared output, redacted like `export` (README, Privacy): every secret in the
   * sessions' headers, lines, quarantine records and artifact files becomes a marker
   * (`redactForSharing`, the store's key); blob bytes, ids and refs are never touched. `false`
   * bundles the sessions byte for byte (`--no-redact`); an object names other rules or a key.
   * @default true
   */
  redactOutput?: boolean | SharingRedactionOptions;
  /** Compress the archive (`--compress`): `unbundle` tells a compressed bundle by its first bytes. @default none */
  compress?: BundleCodec;
}

/** Bytes gathered before one write into the archive (lines are small; a write per line would be slow). */
const CHUNK = 256 * 1024;

/** The members of a streamed text part: `\n`-terminated lines, in chunks of about `CHUNK` bytes, at most `limit` lines. */
async function* chunksOf(lines: AsyncIterable<string>, limit = Infinity): AsyncIterable<Buffer> {
  let parts: Buffer[] = [];
  let size = 0;
  let count = 0;
  for await (const line of lines) {
    if (count++ >= limit) break;
    const bytes = Buffer.from(`${line}\n`);
    parts.push(bytes);
    size += bytes.length;
    if (size >= CHUNK) {
      yield Buffer.concat(parts);
      parts = [];
      size = 0;
    }
  }
  if (size > 0) yield Buffer.concat(parts);
}

/**
 * Size, sha256 and line count of a streamed text part (a first pass: a tar header states the size
 * first), and the blob hashes its lines name (what `blobHashes()` gives for stored lines, without a third read).
 */
async function measure(lines: AsyncIterable<string>, refs: Set<string>): Promise<{ size: number; sha256: string; lines: number }> {
  const hash = createHash("sha256");
  let size = 0;
  let count = 0;
  for await (const line of lines) {
    const bytes = Buffer.from(`${line}\n`);
    hash.update(bytes);
    size += bytes.length;
    count++;
    for (const ref of hashesIn(line)) refs.add(ref);
  }
  return { size, sha256: hash.digest("hex"), lines: count };
}

const MTIME = new Date(0);

/** The sha256 of bytes read on demand (null when they are not `size` bytes long). */
async function sha256Of(bytes: SnapshotBytes): Promise<string | null> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const piece of bytes.open()) {
    hash.update(piece);
    size += piece.length;
  }
  return size === bytes.size ? hash.digest("hex") : null;
}

/** Writes one member from chunks, waiting on the archive's reader (backpressure); returns its size and sha256. */
async function addMember(
  pack: tar.Pack,
  name: string,
  size: number,
  chunks: Iterable<Buffer> | AsyncIterable<Buffer>,
): Promise<ManifestMember> {
  const hash = createHash("sha256");
  let written = 0;
  let done!: () => void;
  let fail!: (err: Error) => void;
  const finished = new Promise<void>((resolve, reject) => {
    done = resolve;
    fail = reject;
  });
  const entry = pack.entry({ name, size, mode: 0o600, mtime: MTIME, type: "file" }, (err) => (err ? fail(err) : done()));
  for await (const chunk of chunks) {
    if (written + chunk.length > size) throw changedMeanwhile(name);
    hash.update(chunk);
    written += chunk.length;
    if (!entry.write(chunk)) await new Promise<void>((resolve) => entry.once("drain", () => resolve()));
  }
  if (written !== size) throw changedMeanwhile(name);
  entry.end(() => {});
  await finished;
  return { name, size, sha256: hash.digest("hex") };
}

function changedMeanwhile(name: string): TranscriptStoreError {
  return new TranscriptStoreError("PERSISTENCE_FAILED", `${name} changed while it was being bundled; run bundle again`);
}

/** A streamed text part as a member: measured, then written; the second read must give the same bytes. */
async function addLines(
  pack: tar.Pack,
  name: string,
  lines: () => AsyncIterable<string>,
  refs = new Set<string>(),
): Promise<{ member: ManifestMember; lines: number }> {
  const first = await measure(lines(), refs);
  // A live session may grow between the reads: the first read's lines are what the bundle holds.
  const member = await addMember(pack, name, first.size, chunksOf(lines(), first.lines));
  if (member.sha256 !== first.sha256) throw changedMeanwhile(name);
  return { member, lines: first.lines };
}

async function addSession(
  pack: tar.Pack,
  snapshot: SessionSnapshot,
  index: number,
  members: ManifestMember[],
  hashes: Set<string>,
): Promise<ManifestSession> {
  const dir = sessionDir(index);
  const header = Buffer.from(`${snapshot.headerLine}\n`);
  members.push(await addMember(pack, headerMember(dir), header.length, [header]));
  const lines = await addLines(pack, linesMember(dir), () => snapshot.lines(), hashes);
  members.push(lines.member);
  const quarantine = await addLines(pack, quarantineMember(dir), () => snapshot.quarantine());
  members.push(quarantine.member);
  let artifacts = 0;
  for await (const artifact of snapshot.artifacts()) {
    members.push(await addMember(pack, artifactMember(dir, artifact.name), artifact.size, artifact.open()));
    artifacts++;
  }
  return { id: snapshot.header.id, dir, lines: lines.lines, quarantine: quarantine.lines, artifacts };
}

/** Fills the archive: every session's members, every blob once, the manifest last (saying what redaction found: `tally`). */
async function fill(
  pack: tar.Pack,
  snapshots: SessionSnapshot[],
  options: ResolvedSessionManagerOptions,
  tally: RedactionTally | null,
): Promise<void> {
  const members: ManifestMember[] = [];
  const sessions: ManifestSession[] = [];
  const hashes = new Set<string>();
  const blobOf = new Map<string, SessionSnapshot>();
  for (const [index, snapshot] of snapshots.entries()) {
    const before = new Set(hashes);
    sessions.push(await addSession(pack, snapshot, index, members, hashes));
    for (const hash of hashes) if (!before.has(hash) && !blobOf.has(hash)) blobOf.set(hash, snapshot);
  }
  const missingBlobs: string[] = [];
  for (const [hash, snapshot] of blobOf) {
    const bytes = await snapshot.blob(hash);
    // checked before its member is begun (a read of its own): a damaged blob is left out, not half written
    if (bytes === null || (await sha256Of(bytes)) !== hash) {
      options.onWarning({
        code: bytes === null ? "BLOB_MISSING" : "BLOB_CORRUPT",
        message:
          `blob ${hash} is referenced by session ${snapshot.header.id} but its store ` +
          `${bytes === null ? "lacks it" : "holds other bytes"}; bundled without it`,
      });
      missingBlobs.push(hash);
      continue;
    }
    const member = await addMember(pack, blobMember(hash), bytes.size, bytes.open());
    if (member.sha256 !== hash) throw changedMeanwhile(member.name);
    members.push(member);
  }
  const found = tally?.total() ?? new Map<string, number>();
  const redaction = tally === null ? { redacted: false } : { redacted: true, redactions: Object.fromEntries(found) };
  const manifest: BundleManifest = { format: BUNDLE_FORMAT, version: BUNDLE_VERSION, sessions, members, missingBlobs, ...redaction };
  if (found.size > 0) {
    options.onWarning({ code: "SECRET_REDACTED", message: `bundle: redacted ${describeCounts(found)}; --no-redact keeps them` });
  }
  const text = Buffer.from(`${JSON.stringify(manifest, null, 1)}\n`);
  await addMember(pack, MANIFEST_NAME, text.length, [text]);
  pack.finalize();
}

/** Every session of `ids` as a snapshot (`SESSION_NOT_FOUND` for an id the store lacks), found before any byte is written. */
async function snapshotsOf(ids: readonly string[], options: ResolvedSessionManagerOptions): Promise<SessionSnapshot[]> {
  const backend = backendOf(options);
  const snapshots: SessionSnapshot[] = [];
  for (const id of new Set(ids)) {
    const ref = await backend.locate(id, options);
    if (ref === null) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session ${id} in the store`);
    snapshots.push(await backend.exportSnapshot(ref, options));
  }
  return snapshots;
}

async function* bundleBytes(
  ids: readonly string[],
  options: ResolvedSessionManagerOptions,
  redact: BundleOptions["redactOutput"],
  root: string | undefined,
): AsyncIterable<Buffer> {
  if (ids.length === 0) throw new TranscriptStoreError("INVALID_OPTION", "bundle: name at least one session id");
  // made with the store's key (a database's own), so the bundle's markers equal the stored ones
  const redactor = await sharingRedactorOf(options.store, root, redact);
  const stored = await snapshotsOf(ids, options);
  const tally = redactor === null ? null : new RedactionTally();
  const snapshots = tally === null ? stored : stored.map((s, i) => redactSnapshot(s, redactor!, tally, sessionDir(i)));
  const pack = tar.pack();
  let failure: unknown = null;
  const filling = fill(pack, snapshots, options, tally).catch((err: unknown) => {
    failure = err;
    pack.destroy(err as Error);
  });
  try {
    for await (const chunk of pack) yield chunk as Buffer;
  } catch (err) {
    throw failure ?? err;
  }
  await filling;
  if (failure !== null) throw failure;
}

/**
 * The sessions `ids` (exact ids, any backend: the file tree or `options.store`) as one bundle, a tar
 * archive streamed as it is made: per session its header line, its entry lines byte for byte, its
 * quarantine records and artifact files; every blob their lines reference, once; a manifest last
 * (format version, sessions, each member's size and sha256, whether it was redacted and what was).
 * Redacted by default (`redactOutput`). Nothing is ever held whole in memory: lines, artifact files
 * and blobs are read in pieces (a database's blob excepted: one buffer). An id the store lacks:
 * `SESSION_NOT_FOUND` before any byte.
 */
export function bundle(ids: readonly string[], options: BundleOptions = {}): Readable {
  const { redactOutput, compress, ...storeOptions } = options;
  const resolved = resolveSessionManagerOptions(storeOptions);
  const tar = Readable.from(bundleBytes([...ids], resolved, redactOutput, storeOptions.root), { objectMode: false });
  return compress === undefined ? tar : compressed(tar, compress);
}
