import { type StoreWarning, TranscriptStoreError } from "../errors.ts";
import type { SessionEntry } from "../format/types.ts";
import { type PreparedLine, prepareLine, type ResolvedPrepareOptions } from "./pipeline.ts";

/**
 * `prepareLine` as every writer calls it (the session file, stored lines, a snapshot of entries): an
 * entry that cannot be serialized is `PERSISTENCE_FAILED` (a coded error passes as it is), and image
 * payloads that stay inline are reported once as `IMAGE_NOT_EXTERNALIZED`.
 */
export function prepareLineWarned(
  entry: SessionEntry,
  options: ResolvedPrepareOptions,
  warn: ((w: StoreWarning) => void) | undefined,
): PreparedLine {
  let prepared: PreparedLine;
  try {
    prepared = prepareLine(entry, options);
  } catch (err) {
    if (err instanceof TranscriptStoreError) throw err;
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Entry cannot be serialized: ${(err as Error).message}`, { cause: err });
  }
  if (prepared.imagesKeptInline > 0) {
    warn?.({ code: "IMAGE_NOT_EXTERNALIZED", message: `${prepared.imagesKeptInline} image payload(s) are not base64; kept inline, whole` });
  }
  return prepared;
}
