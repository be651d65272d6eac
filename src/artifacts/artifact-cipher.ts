import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { TranscriptStoreError } from "../errors.ts";

/** First bytes of an encrypted artifact or agent output file (docs/format.md, Encrypted artifacts). */
export const SEALED_ARTIFACT_MAGIC = Buffer.from("tsa1\n");
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Bytes a sealed file holds beyond its plaintext. */
export const SEALED_OVERHEAD = SEALED_ARTIFACT_MAGIC.length + IV_BYTES + TAG_BYTES;

/**
 * Seals the artifacts and agent outputs of one encrypted session: each file whole, AES-256-GCM under
 * `HKDF-SHA256(store key, salt = session id, info = "transcript-store artifacts v1")`, a fresh IV, and
 * as associated data the session id and the file's name, so a file renamed, swapped with another or
 * copied from another session fails authentication.
 */
export class ArtifactCipher {
  private readonly key: Buffer;

  constructor(
    storeKey: Uint8Array,
    readonly sessionId: string,
  ) {
    this.key = Buffer.from(hkdfSync("sha256", storeKey, Buffer.from(sessionId), "transcript-store artifacts v1", 32));
  }

  /** The file content for `plain` stored under the file name `name`. */
  seal(name: string, plain: Uint8Array): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(this.aad(name));
    const ct = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([SEALED_ARTIFACT_MAGIC, iv, ct, cipher.getAuthTag()]);
  }

  /** The plain bytes of the file `name`; anything that does not authenticate is `DECRYPT_FAILED` (nothing served). */
  open(name: string, sealed: Buffer, path?: string): Buffer {
    const fail = (why: string) =>
      new TranscriptStoreError(
        "DECRYPT_FAILED",
        `Artifact file ${name} of session ${this.sessionId} ${why}; nothing is served`,
        path === undefined ? {} : { path },
      );
    const head = SEALED_ARTIFACT_MAGIC.length;
    if (sealed.length < head + IV_BYTES + TAG_BYTES || !sealed.subarray(0, head).equals(SEALED_ARTIFACT_MAGIC))
      throw fail("is not encrypted (written in clear by someone else, or damaged)");
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, sealed.subarray(head, head + IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(this.aad(name));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      return Buffer.concat([decipher.update(sealed.subarray(head + IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw fail("fails authentication (tampered, renamed, from another session, or another key)");
    }
  }

  private aad(name: string): Buffer {
    return Buffer.from(`transcript-store artifact v1\n${this.sessionId}\n${name}`);
  }
}
