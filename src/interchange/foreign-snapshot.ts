import type { StoreWarning } from "../errors.ts";
import type { SessionEntry, SessionHeader } from "../format/types.ts";
import { prepareLine, type ResolvedPrepareOptions } from "../prepare/pipeline.ts";
import { stripTransientFields } from "../prepare/strip-transient-fields.ts";
import { truncateStrings } from "../prepare/truncate-strings.ts";
import { bytesSource, hashesIn, type SessionSnapshot, type SnapshotArtifact } from "../storage/session-snapshot.ts";
import { FOREIGN_FIELD } from "./foreign-entry.ts";

/** The entry with its long strings cut and transient keys removed (the prepare pipeline's rules), its `foreign` field untouched. */
function cutMapped(entry: SessionEntry, prepare: ResolvedPrepareOptions): SessionEntry {
  const { [FOREIGN_FIELD]: foreign, ...rest } = entry;
  const cut = truncateStrings(stripTransientFields(rest, prepare.transientKeys), prepare.maxStringChars);
  return cut === rest ? entry : { ...cut, [FOREIGN_FIELD]: foreign };
}

/** Prepared lines up to this many UTF-16 units are kept after the first pass (later passes read them, not the source). */
export const FOREIGN_LINE_CACHE_CHARS = 64 * 1024 * 1024;

/**
 * An imported session as a snapshot the seam takes (`importSnapshot`), read on demand: a call of
 * `lines()` maps the source again, one line at a time, so a large transcript is never held whole
 * (only its images, once seen, for `blob`); a small one's lines (`FOREIGN_LINE_CACHE_CHARS`) are
 * kept after the first pass. The source record is kept whole (lossless): only what
 * the model sees is cut at the store's string limit and loses the transient keys; images go to
 * the blob store in both.
 */
export function foreignSnapshot(
  header: SessionHeader,
  entries: () => AsyncIterable<SessionEntry>,
  prepare: ResolvedPrepareOptions,
  options: { warn?: (w: StoreWarning) => void; artifacts?: () => AsyncIterable<SnapshotArtifact> } = {},
): SessionSnapshot {
  const whole: ResolvedPrepareOptions = {
    ...prepare,
    maxStringChars: Number.MAX_SAFE_INTEGER,
    transientKeys: new Set(),
    transientMarkers: [],
  };
  const blobs = new Map<string, Buffer>();
  let warned = false;
  let passes = 0;
  let cache: string[] | null = null;
  async function* lines(): AsyncIterable<string> {
    if (cache !== null) {
      yield* cache;
      return;
    }
    let kept = 0;
    let gathered: string[] | null = [];
    let chars = 0;
    for await (const entry of entries()) {
      const prepared = prepareLine(cutMapped(entry, prepare), whole);
      kept += prepared.imagesKeptInline;
      for (const b of prepared.blobs) blobs.set(b.hash, b.bytes);
      if (gathered !== null) {
        chars += prepared.line.length;
        if (chars <= FOREIGN_LINE_CACHE_CHARS) gathered.push(prepared.line);
        else gathered = null;
      }
      yield prepared.line;
    }
    cache = gathered;
    passes++;
    if (kept > 0 && !warned) {
      warned = true;
      options.warn?.({ code: "IMAGE_NOT_EXTERNALIZED", message: `${kept} image payload(s) are not base64; kept inline, whole` });
    }
  }
  return {
    header,
    headerLine: JSON.stringify(header),
    lines,
    quarantine: async function* () {},
    artifacts: options.artifacts ?? async function* () {},
    blobHashes: async function* () {
      const seen = new Set<string>();
      for await (const line of lines()) {
        for (const hash of hashesIn(line)) {
          if (seen.has(hash)) continue;
          seen.add(hash);
          yield hash;
        }
      }
    },
    async blob(hash) {
      if (!blobs.has(hash) && passes === 0) for await (const _ of lines());
      const bytes = blobs.get(hash);
      return bytes === undefined ? null : bytesSource(bytes);
    },
  };
}
