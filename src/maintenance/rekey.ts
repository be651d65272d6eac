import { resolve } from "node:path";
import { TranscriptStoreError } from "../errors.ts";
import type { RawRecord, SessionHeader } from "../format/types.ts";
import { openLineText, sealLine } from "../crypto/keyed-lines.ts";
import { cipherFor, ENCRYPTION_SCHEME, headerEncryption, LineCipher, type StoreKey } from "../crypto/line-cipher.ts";
import { scanSessionFile } from "../session/session-file-reader.ts";
import { writeSessionFileAtomic } from "../session/session-file.ts";
import { acquireSessionLock } from "../session/session-lock.ts";
import { rekeyBlobs } from "./rekey-blobs.ts";
import { reclaimDeadSessionTemps } from "./dead-temps.ts";
import { ArtifactCipher } from "../artifacts/artifact-cipher.ts";
import { planRekeyArtifacts } from "../artifacts/artifact-reseal.ts";
import { artifactsDirOf } from "../session/paths.ts";

export interface RekeyOptions {
  /** The key the session (and its keyed blobs) is encrypted with now. */
  from: StoreKey;
  /** The key to encrypt it with (its `keyId` goes into the header). */
  to: StoreKey;
  fsync?: boolean;
  /** The blob store of the session's keyed blobs (images): required when its lines reference any. */
  blobsDir?: string;
}

export interface RekeyReport {
  path: string;
  entries: number;
  /** Artifact and agent output files sealed again under the new key. */
  artifacts: number;
  fromKeyId: string;
  toKeyId: string;
}

/**
 * Re-encrypts an encrypted session file under another key, all or nothing: under the session's
 * lock, every line is decrypted with `from` (any failure: `KEY_REQUIRED` / `DECRYPT_FAILED`, nothing
 * written) and the whole file is written again (temp file + rename) with the header naming `to`.
 * Its keyed blobs (images) are stored again under the new key first (`rekeyBlobs`), the old ones left for gc;
 * its artifacts and agent outputs are sealed again (each temp + rename) before the session file is
 * replaced: a crash between them leaves some under the new key, which a second rekey skips.
 * A file with malformed lines or a torn tail is refused (`PERSISTENCE_FAILED`): open it once to repair it.
 */
export async function rekeySessionFile(path: string, options: RekeyOptions): Promise<RekeyReport> {
  const abs = resolve(path);
  const lock = await acquireSessionLock(abs, { onCompromised: () => {} });
  try {
    reclaimDeadSessionTemps(abs);
    const texts: string[] = [];
    let header: SessionHeader | null = null;
    const scanned = scanSessionFile(abs, {
      openRecord: (record: RawRecord, head: SessionHeader, ordinal: number) => {
        header = head;
        const cipher = cipherFor(head, options.from);
        if (cipher === null)
          throw new TranscriptStoreError("INVALID_OPTION", `${abs} is not encrypted: rekey changes an encrypted session's key`);
        const text = openLineText(cipher, record, ordinal);
        texts.push(text);
        return JSON.parse(text) as RawRecord;
      },
    });
    if (scanned === null) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session at ${abs}`, { path: abs });
    if (scanned.header === null) throw new TranscriptStoreError("BAD_HEADER", `Not a session file: ${abs}`, { path: abs });
    header ??= scanned.header;
    const current = headerEncryption(header);
    if (current === null)
      throw new TranscriptStoreError("INVALID_OPTION", `${abs} is not encrypted: rekey changes an encrypted session's key`);
    cipherFor(header, options.from); // a header-only session: the key is still checked
    if (scanned.malformed.length > 0 || scanned.tornTail !== null || scanned.repaired.length > 0 || scanned.missingFinalNewline) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `${abs} has lines to repair: open it once, then rekey`, { path: abs });
    }
    // Every artifact is authenticated first, then keyed blobs are stored under new names: a failure
    // so far leaves the session as it was. Artifacts are sealed again before the session file is.
    const artifacts = planRekeyArtifacts(
      artifactsDirOf(abs),
      new ArtifactCipher(options.from.key, header.id),
      new ArtifactCipher(options.to.key, header.id),
      options.fsync ?? true,
    );
    const rekeyed = rekeyBlobs(texts, options.blobsDir, options.from, options.to, options.fsync ?? true);
    lock.assertHeld();
    artifacts.commit();
    const next: SessionHeader = { ...header, encryption: { scheme: ENCRYPTION_SCHEME, keyId: options.to.keyId } };
    const cipher = new LineCipher(options.to, header.id);
    lock.assertHeld();
    writeSessionFileAtomic(
      abs,
      (emit) => {
        emit(Buffer.from(`${JSON.stringify(next)}\n`));
        for (let i = 0; i < rekeyed.length; i++) emit(Buffer.from(`${sealLine(cipher, rekeyed[i]!, i + 1)}\n`));
      },
      { fsync: options.fsync ?? true },
    );
    return { path: abs, entries: texts.length, artifacts: artifacts.files, fromKeyId: current.keyId, toKeyId: options.to.keyId };
  } finally {
    await lock.release();
  }
}
