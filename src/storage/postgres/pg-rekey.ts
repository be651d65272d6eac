import { ArtifactCipher } from "../../artifacts/artifact-cipher.ts";
import { resealContent } from "../../artifacts/artifact-reseal.ts";
import type { PgStore } from "./db/index.ts";
import { TranscriptStoreError } from "../../errors.ts";
import { ENCRYPTION_SCHEME, headerEncryption, LineCipher, type StoreKey } from "../../crypto/line-cipher.ts";
import { openRows, pgCipher, sealRow } from "./pg-cipher.ts";
import { withLeasedSession } from "./pg-rewrite.ts";
import type { StoreRekeyReport } from "../store-drivers.ts";

/** What `rekeyPgSession` did (the seam's report). */
export type PgRekeyReport = StoreRekeyReport;

/**
 * Re-encrypts the encrypted database session `id` under another key, all or nothing: under its lease,
 * every row is opened with `from` (`KEY_REQUIRED` / `DECRYPT_FAILED`: nothing written), then the header
 * naming `to` and every row sealed under `to` replace the old ones in ONE transaction fenced by the lease,
 * with its sealed artifacts and agent outputs, each opened under `from` (`DECRYPT_FAILED`: nothing
 * written) and sealed under `to`; one in clear (written before artifacts were sealed) or damaged is left
 * as it is. A plain session is `INVALID_OPTION`.
 */
export function rekeyPgSession(store: PgStore, name: string, id: string, keys: { from: StoreKey; to: StoreKey }): Promise<PgRekeyReport> {
  return withLeasedSession(store, id, name, async ({ header, rows, token }) => {
    const current = headerEncryption(header);
    if (current === null) {
      throw new TranscriptStoreError("INVALID_OPTION", `Session ${id} is not encrypted: rekey changes an encrypted session's key`);
    }
    const plain = openRows(header, rows, pgCipher(header, keys.from));
    const next = { ...header, encryption: { scheme: ENCRYPTION_SCHEME, keyId: keys.to.keyId } };
    const cipher = new LineCipher(keys.to, id);
    const lines = plain.map((row, i) => sealRow({ line: row.line, entryId: null, kind: null }, cipher, i + 1));
    const [from, to] = [new ArtifactCipher(keys.from.key, id), new ArtifactCipher(keys.to.key, id)];
    let artifacts = 0;
    // in the rewrite's transaction: one that does not open under `from` aborts it whole (DECRYPT_FAILED)
    await store.rewriteSession(id, token, JSON.stringify(next), lines, [], (name, bytes) => {
      const sealed = resealContent(name, bytes, from, to);
      if (sealed !== null) artifacts++;
      return sealed;
    });
    return { id, entries: lines.length, fromKeyId: current.keyId, toKeyId: keys.to.keyId, artifacts };
  });
}
