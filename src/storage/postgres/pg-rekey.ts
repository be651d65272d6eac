import { ArtifactCipher, SEALED_ARTIFACT_MAGIC } from "../../artifacts/artifact-cipher.ts";
import type { PgArtifactContentWrite, PgStore } from "../../database/index.ts";
import { TranscriptStoreError } from "../../errors.ts";
import { ENCRYPTION_SCHEME, headerEncryption, LineCipher, type StoreKey } from "../../session/line-cipher.ts";
import { openRows, pgCipher, sealRow } from "./pg-cipher.ts";
import { withLeasedSession } from "./pg-rewrite.ts";

/** What `rekeyPgSession` did. */
export interface PgRekeyReport {
  id: string;
  entries: number;
  fromKeyId: string;
  toKeyId: string;
  /** Artifacts and agent outputs sealed again under the new key. */
  artifacts: number;
}

/**
 * Re-encrypts the encrypted database session `id` under another key, all or nothing: under its lease,
 * every row is opened with `from` (`KEY_REQUIRED` / `DECRYPT_FAILED`: nothing written), then the header
 * naming `to` and every row sealed under `to` replace the old ones in ONE transaction fenced by the lease,
 * with its sealed artifacts and agent outputs, each opened under `from` first (`DECRYPT_FAILED`, a
 * damaged one `PERSISTENCE_FAILED`: nothing written) and sealed under `to`. A plain session is `INVALID_OPTION`.
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
    const artifacts = await resealedArtifacts(store, id, new ArtifactCipher(keys.from.key, id), new ArtifactCipher(keys.to.key, id));
    await store.rewriteSession(id, token, JSON.stringify(next), lines, [], artifacts);
    return { id, entries: lines.length, fromKeyId: current.keyId, toKeyId: keys.to.keyId, artifacts: artifacts.length };
  });
}

/**
 * The session's sealed artifact and agent output files (`.log`, `.md`; read whole, one at a time)
 * opened under `from` and sealed under `to`. A file not sealed (written in clear before artifacts
 * were sealed) is left as it is, as the file store's rekey does.
 */
async function resealedArtifacts(store: PgStore, id: string, from: ArtifactCipher, to: ArtifactCipher): Promise<PgArtifactContentWrite[]> {
  const out: PgArtifactContentWrite[] = [];
  for (const listed of await store.artifacts.list(id)) {
    if (!(listed.id.endsWith(".log") || listed.id.endsWith(".md"))) continue;
    const artifact = await store.artifacts.get(id, listed.id);
    if (artifact === null || !artifact.content.subarray(0, SEALED_ARTIFACT_MAGIC.length).equals(SEALED_ARTIFACT_MAGIC)) continue;
    out.push({ id: listed.id, content: to.seal(listed.id, from.open(listed.id, artifact.content)) });
  }
  return out;
}
