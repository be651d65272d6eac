import { join, resolve } from "node:path";
import { ArtifactCipher, SEALED_ARTIFACT_MAGIC } from "../artifacts/artifact-cipher.ts";
import { listEntries, readGuarded } from "../artifacts/artifact-files.ts";
import { blobRefsIn, toBlobRef } from "../blob/blob-ref.ts";
import { BlobStore } from "../blob/blob-store.ts";
import { keyedBlobRefsIn, toKeyedBlobRef } from "../blob/keyed-blob-ref.ts";
import { KeyedBlobs } from "../blob/keyed-blobs.ts";
import { TranscriptStoreError } from "../errors.ts";
import { isRecord, type RawRecord, type SessionHeader } from "../format/types.ts";
import { writeFileAtomic } from "../io.ts";
import { keyedBlobCipherOf, openLineText, sealLine } from "../crypto/keyed-lines.ts";
import { cipherFor, ENCRYPTION_SCHEME, headerEncryption, LineCipher, type StoreKey } from "../crypto/line-cipher.ts";
import { artifactsDirOf } from "../session/paths.ts";
import { readSessionHeader, scanSessionFile } from "../session/session-file-reader.ts";
import { writeSessionFileAtomic } from "../session/session-file.ts";
import { acquireSessionLock } from "../session/session-lock.ts";

export interface SetEncryptionOptions {
  /** The store key: the one to encrypt with, or the one the session is encrypted with now. */
  key: StoreKey;
  /** The blob store of the session's images: required when its lines reference any. */
  blobsDir?: string;
  fsync?: boolean;
}

export interface SetEncryptionReport {
  path: string;
  /** `encrypted` / `decrypted`, or `unchanged` when the session already was as asked (encrypt: entries 0, not read). */
  status: "encrypted" | "decrypted" | "unchanged";
  entries: number;
  /** Images moved between the plain and the keyed blob store (the old copies are left for gc). */
  blobs: number;
  /** Artifact and agent output files sealed or opened. */
  artifacts: number;
}

/** Sealed artifact kinds: content (`.log`) and agent outputs (`.md`); metadata stays clear. */
const isSealedKind = (name: string) => name.endsWith(".log") || name.endsWith(".md");
const isSealed = (bytes: Buffer) => bytes.subarray(0, SEALED_ARTIFACT_MAGIC.length).equals(SEALED_ARTIFACT_MAGIC);

/**
 * Encrypts a plain session file (`encrypt`) or decrypts an encrypted one (`decrypt`) under the
 * store key, all or nothing for its lines: under the session's lock every line is read (and, to
 * decrypt, authenticated: `DECRYPT_FAILED` / `KEY_REQUIRED` with nothing written) before anything is
 * written. Its images move between the plain and the keyed blob store (new names, nothing
 * overwritten; the old copies stay for gc), its artifacts and agent outputs are sealed or opened
 * (each temp + rename), and last the session file is written again whole (temp + rename) with its
 * header naming the key, or none. A crash midway leaves the session file as it was and some
 * artifacts already converted: running the same command again finishes the work (an artifact
 * already converted is recognised and skipped). A file with lines to repair is refused
 * (`PERSISTENCE_FAILED`): open it once first.
 */
export async function setSessionEncryption(
  path: string,
  mode: "encrypt" | "decrypt",
  options: SetEncryptionOptions,
): Promise<SetEncryptionReport> {
  const abs = resolve(path);
  const fsync = options.fsync ?? true;
  const lock = await acquireSessionLock(abs, { onCompromised: () => {} });
  try {
    // Already sealed, under whatever key: nothing to encrypt (another store's key may not be this one).
    if (mode === "encrypt" && readSessionHeader(abs)?.encryption !== undefined)
      return { path: abs, status: "unchanged", entries: 0, blobs: 0, artifacts: 0 };
    const texts: string[] = [];
    const scanned = scanSessionFile(abs, {
      openRecord: (record: RawRecord, head: SessionHeader, ordinal: number) => {
        const cipher = cipherFor(head, options.key);
        const text = cipher === null ? JSON.stringify(record) : openLineText(cipher, record, ordinal);
        texts.push(text);
        return JSON.parse(text) as RawRecord;
      },
    });
    if (scanned === null) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session at ${abs}`, { path: abs });
    if (scanned.header === null) throw new TranscriptStoreError("BAD_HEADER", `Not a session file: ${abs}`, { path: abs });
    const header = scanned.header;
    if (texts.length < scanned.records.length) {
      texts.length = 0;
      for (const r of scanned.records) texts.push(JSON.stringify(r.record));
    }
    const encrypted = headerEncryption(header) !== null;
    if (encrypted) cipherFor(header, options.key); // a header-only session: the key is still checked
    const report = { path: abs, entries: texts.length, blobs: 0, artifacts: 0 };
    if (encrypted === (mode === "encrypt")) return { ...report, status: "unchanged" };
    if (scanned.malformed.length > 0 || scanned.tornTail !== null || scanned.repaired.length > 0 || scanned.missingFinalNewline)
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `${abs} has lines to repair: open it once, then ${mode} it`, { path: abs });
    const artifacts = convertArtifacts(artifactsDirOf(abs), new ArtifactCipher(options.key.key, header.id), mode, fsync);
    const moved = moveBlobs(texts, options, mode, fsync);
    lock.assertHeld();
    const converted = artifacts();
    const next: SessionHeader = { ...header };
    if (mode === "encrypt") next.encryption = { scheme: ENCRYPTION_SCHEME, keyId: options.key.keyId };
    else delete next.encryption;
    const cipher = mode === "encrypt" ? new LineCipher(options.key, header.id) : null;
    lock.assertHeld();
    writeSessionFileAtomic(
      abs,
      (emit) => {
        emit(Buffer.from(`${JSON.stringify(next)}\n`));
        for (let i = 0; i < moved.texts.length; i++)
          emit(Buffer.from(`${cipher === null ? moved.texts[i]! : sealLine(cipher, moved.texts[i]!, i + 1)}\n`));
      },
      { fsync },
    );
    return { ...report, status: mode === "encrypt" ? "encrypted" : "decrypted", blobs: moved.count, artifacts: converted };
  } finally {
    await lock.release();
  }
}

/**
 * Checks every sealed-kind artifact converts (opens under the key, to decrypt) and returns the
 * step that converts them; a file already as asked (left by an interrupted run) is skipped.
 */
function convertArtifacts(dir: string, cipher: ArtifactCipher, mode: "encrypt" | "decrypt", fsync: boolean): () => number {
  const pending: string[] = [];
  // An encrypted session's artifact metadata keeps no summary (a preview of the content) in clear.
  const summaries: string[] = [];
  for (const entry of listEntries(dir)) {
    if (mode === "encrypt" && entry.isFile() && entry.name.endsWith(".meta.json")) {
      const bytes = readGuarded(join(dir, entry.name));
      if (bytes !== null && bytes !== "unsafe" && isRecord(parseOrNull(bytes)) && "summary" in (parseOrNull(bytes) as object))
        summaries.push(entry.name);
    }
    if (!entry.isFile() || !isSealedKind(entry.name)) continue;
    const path = join(dir, entry.name);
    const bytes = readGuarded(path);
    if (bytes === null || bytes === "unsafe") continue;
    if (mode === "decrypt" && isSealed(bytes)) {
      cipher.open(entry.name, bytes, path); // DECRYPT_FAILED before anything is written
      pending.push(entry.name);
    } else if (mode === "encrypt" && !(isSealed(bytes) && opens(cipher, entry.name, bytes))) pending.push(entry.name);
  }
  return () => {
    for (const name of pending) {
      const path = join(dir, name);
      const bytes = readGuarded(path);
      if (bytes === null || bytes === "unsafe") continue;
      writeFileAtomic(path, mode === "encrypt" ? cipher.seal(name, bytes) : cipher.open(name, bytes, path), { fsync });
    }
    for (const name of summaries) {
      const path = join(dir, name);
      const bytes = readGuarded(path);
      const meta = bytes === null || bytes === "unsafe" ? null : parseOrNull(bytes);
      if (!isRecord(meta)) continue;
      delete meta.summary;
      writeFileAtomic(path, Buffer.from(JSON.stringify(meta)), { fsync });
    }
    return pending.length;
  };
}

function parseOrNull(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch {
    return null;
  }
}

function opens(cipher: ArtifactCipher, name: string, bytes: Buffer): boolean {
  try {
    cipher.open(name, bytes);
    return true;
  } catch {
    return false;
  }
}

/** The lines with their image refs moved: plain → keyed (`encrypt`) or keyed → plain (`decrypt`). */
function moveBlobs(
  texts: string[],
  options: SetEncryptionOptions,
  mode: "encrypt" | "decrypt",
  fsync: boolean,
): { texts: string[]; count: number } {
  const refs = new Set<string>();
  for (const text of texts) for (const ref of mode === "encrypt" ? blobRefsIn(text) : keyedBlobRefsIn(text)) refs.add(ref);
  if (refs.size === 0) return { texts, count: 0 };
  if (options.blobsDir === undefined)
    throw new TranscriptStoreError("INVALID_OPTION", `This session references images: ${mode} needs the store's blobsDir`);
  const store = new BlobStore(options.blobsDir, { fsync });
  const keyed = new KeyedBlobs(store, keyedBlobCipherOf(options.key));
  const read = (ref: string): Buffer => {
    const bytes = mode === "encrypt" ? store.getSync(ref) : keyed.getSync(ref);
    if (bytes === null) throw new TranscriptStoreError("BLOB_MISSING", `Blob ${ref} is missing: nothing is ${mode}ed`);
    return bytes;
  };
  for (const ref of refs) read(ref); // all proven readable before anything is written
  const renamed = new Map<string, string>();
  for (const ref of refs) {
    const bytes = read(ref);
    if (mode === "encrypt") renamed.set(toBlobRef(ref), keyed.putSync(bytes).ref);
    else renamed.set(toKeyedBlobRef(ref), store.putSync(bytes).ref);
  }
  const out = texts.map((text) => {
    let next = text;
    for (const [from, to] of renamed) if (next.includes(from)) next = next.split(from).join(to);
    return next;
  });
  return { texts: out, count: renamed.size };
}
