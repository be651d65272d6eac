import { TranscriptStoreError } from "../../errors.ts";
import type { RawRecord, SessionHeader } from "../../format/types.ts";
import type { PgEntry, PgLine } from "./db/index.ts";
import { cipherFor, headerEncryption, type LineCipher, type StoreKey } from "../../crypto/line-cipher.ts";
import { withProvidedKey } from "../../session/encryption-options.ts";
import type { ResolvedSessionManagerOptions } from "../../session/session-options.ts";

/*
 * Encryption at rest on the PostgreSQL backend: the same scheme as the file store (line-cipher.ts),
 * each entry row's line sealed on its own, bound to the session id and the row's seq (its ordinal
 * among the entry lines, as in a file). The row keeps no clear column of the entry: no entry id, no
 * preview, no blob refs, and `kind` is "encrypted" (what an imported encrypted line gets too).
 */

/** The `kind` of an encrypted entry row. */
export const ENCRYPTED_KIND = "encrypted";

/** Options whose encryption holds the key of the session headed by `header` (asked of the key provider when needed). */
export async function withSessionKey(
  options: ResolvedSessionManagerOptions,
  header: SessionHeader,
): Promise<ResolvedSessionManagerOptions> {
  const encryption = headerEncryption(header);
  if (encryption === null || options.encryption === null) return options;
  return { ...options, encryption: await withProvidedKey(options.encryption, { keyId: encryption.keyId }) };
}

/** The line cipher of the session headed by `header` (null: plain); KEY_REQUIRED / DECRYPT_FAILED as `cipherFor`. */
export function pgCipher(header: SessionHeader, key: StoreKey | null | undefined): LineCipher | null {
  return cipherFor(header, key ?? null);
}

/** The row `row` becomes in an encrypted session at `seq`: its line sealed, no clear column of the entry. */
export function sealRow(row: PgLine, cipher: LineCipher, seq: number): PgLine {
  return { line: cipher.seal(row.line, seq), entryId: null, kind: ENCRYPTED_KIND, firstMessage: null, blobRefs: [] };
}

const ENCRYPTED_PREFIX = '{"type":"encrypted"';

/**
 * The rows of a session as plain rows: each line of an encrypted session opened (DECRYPT_FAILED for a
 * tampered, swapped, moved or missing row: seqs must run 1, 2, 3… as the lines of a file do); a plain
 * session's rows as they are, but an encrypted line in a plain session is DECRYPT_FAILED (a header
 * stripped of its encryption must not turn the session plain: later appends would be written in clear).
 */
export function openRows(header: SessionHeader, rows: readonly PgEntry[], cipher: LineCipher | null): PgEntry[] {
  if (cipher === null) {
    const sealed = rows.find((r) => r.line.startsWith(ENCRYPTED_PREFIX));
    if (sealed !== undefined) {
      throw new TranscriptStoreError(
        "DECRYPT_FAILED",
        `Entry row seq ${sealed.seq} of session ${header.id} is encrypted but the header is not; nothing is served`,
      );
    }
    return rows as PgEntry[];
  }
  return rows.map((row, i) => {
    if (row.seq !== i + 1) {
      throw new TranscriptStoreError(
        "DECRYPT_FAILED",
        `Session ${header.id} has entry row seq ${row.seq} where seq ${i + 1} belongs (a row was removed); nothing is served`,
      );
    }
    let record: unknown;
    try {
      record = JSON.parse(row.line);
    } catch {
      record = null;
    }
    if (typeof record !== "object" || record === null) {
      throw new TranscriptStoreError("DECRYPT_FAILED", `Entry row seq ${row.seq} of session ${header.id} is not an encrypted line`);
    }
    const plain = cipher.openText(record as RawRecord, row.seq);
    return { ...row, line: plain };
  });
}
