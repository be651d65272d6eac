import { readdirSync } from "node:fs";
import { REFERRERS_FILE } from "../../src/blob/blob-referrers.ts";
import { PROOF_LOG_FILE } from "../../src/blob/proof-log.ts";

/** The names in a blob directory other than its registry of referrers and its proof log (blobs and temp files). */
export function blobDirEntries(dir: string): string[] {
  return readdirSync(dir).filter((name) => name !== REFERRERS_FILE && name !== PROOF_LOG_FILE);
}
