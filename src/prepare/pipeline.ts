import { TranscriptStoreError } from "../errors.ts";
import { BLOB_REF_PREFIX } from "../blob/blob-ref.ts";
import type { SessionEntry } from "../format/types.ts";
import { DEFAULT_BLOB_THRESHOLD, externalizeImages, externalizeNeeded } from "./externalize-images.ts";
import type { BlobWrite } from "./externalize-images.ts";
import { DEFAULT_TRANSIENT_KEYS, stripNeeded, stripTransientFields } from "./strip-transient-fields.ts";
import { transientMarkers } from "./strip-transient-fields.ts";
import { DEFAULT_MAX_STRING_CHARS, truncateNeeded, truncateStrings } from "./truncate-strings.ts";
import { scanStages, TooDeep, type StageScan } from "./stage-scan.ts";
import { MAX_ENTRY_DEPTH } from "../format/json-depth.ts";

export { MAX_ENTRY_DEPTH };

/**
 * A user stage (e.g. secret redaction): pure, returns the same object when it changes nothing.
 * It may declare when it has nothing to do: `needed(line)` is given the entry's JSON (as it was
 * before the built-in stages: without the blob refs or truncation suffix they may add) and returns
 * false when that proves the stage would change nothing (typically: a substring is absent); the
 * stage is then not called. Without `needed` the stage always runs, and so does every stage when
 * the pipeline only has the text the entry was parsed from (migrate).
 */
export type PrepareStage = ((entry: SessionEntry) => SessionEntry) & { needed?: (line: string) => boolean };

export interface PrepareOptions {
  /** Keys removed at any depth. @default ["partialJson", "jsonlEvents"] */
  transientKeys?: readonly string[];
  /** Shortest base64 image payload moved to the blob store. @default 1024 */
  blobThreshold?: number;
  /** Longest string kept, in UTF-16 units. @default 500000 */
  maxStringChars?: number;
  /** Extra stages run after the built-in ones, in order. */
  stages?: readonly PrepareStage[];
}

export interface ResolvedPrepareOptions {
  transientKeys: ReadonlySet<string>;
  blobThreshold: number;
  maxStringChars: number;
  stages: readonly PrepareStage[];
  /** `"key"` strings whose absence from a serialized line proves no transient key is present. */
  transientMarkers: readonly string[];
}

function positiveInt(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    throw new TranscriptStoreError("INVALID_OPTION", `${name} must be an integer >= ${min}, got ${String(value)}`);
  }
  return value;
}

/** Validates prepare options once and applies defaults. */
export function resolvePrepareOptions(options: PrepareOptions = {}): ResolvedPrepareOptions {
  const keys = options.transientKeys ?? DEFAULT_TRANSIENT_KEYS;
  if (!Array.isArray(keys) || keys.some((k) => typeof k !== "string")) {
    throw new TranscriptStoreError("INVALID_OPTION", "transientKeys must be an array of strings");
  }
  const stages = options.stages ?? [];
  const badStage = (s: PrepareStage) => typeof s !== "function" || (s.needed !== undefined && typeof s.needed !== "function");
  if (!Array.isArray(stages) || stages.some(badStage)) {
    const message = "stages must be an array of functions (each with an optional needed function)";
    throw new TranscriptStoreError("INVALID_OPTION", message);
  }
  const maxStringChars = positiveInt("maxStringChars", options.maxStringChars, DEFAULT_MAX_STRING_CHARS, 100);
  return {
    transientKeys: new Set(keys),
    blobThreshold: positiveInt("blobThreshold", options.blobThreshold, DEFAULT_BLOB_THRESHOLD, 0),
    maxStringChars,
    stages,
    transientMarkers: transientMarkers(keys),
  };
}

export interface PreparedEntry {
  entry: SessionEntry;
  blobs: BlobWrite[];
  /** Image payloads that could not be externalized (not base64): kept inline and whole. */
  imagesKeptInline: number;
}

/**
 * @deprecated Use `prepareLine`, the pipeline's one entry point: this is `prepareLine` without the
 * line (its `entry`, `blobs` and `imagesKeptInline`).
 */
export function prepareEntryForPersistence(entry: SessionEntry, options: ResolvedPrepareOptions): PreparedEntry {
  const { entry: prepared, blobs, imagesKeptInline } = prepareLine(entry, options);
  return { entry: prepared, blobs, imagesKeptInline };
}

/** Which stages can change an entry; a stage that cannot is not run at all. */
interface StageNeeds {
  strip: boolean;
  images: boolean;
  cut: boolean;
  /** The user stages to run, in order. */
  user: readonly PrepareStage[];
}

const NO_STAGES: readonly PrepareStage[] = [];

function runStages(entry: SessionEntry, options: ResolvedPrepareOptions, needs: StageNeeds): PreparedEntry {
  let next = needs.strip ? stripTransientFields(entry, options.transientKeys) : entry;
  let blobs: BlobWrite[] = [];
  let imagesKeptInline = 0;
  if (needs.images) ({ value: next, blobs, keptInline: imagesKeptInline } = externalizeImages(next, options.blobThreshold));
  if (needs.cut) next = truncateStrings(next, options.maxStringChars);
  for (const stage of needs.user) next = stage(next);
  return { entry: next, blobs, imagesKeptInline };
}

export interface PreparedLine extends PreparedEntry {
  /** The JSON line, without its trailing `\n`. */
  line: string;
  /**
   * False when the line is known to name no blob (the common text entry), so the writer need not
   * search it for refs; true when it may (externalized images, refs the entry carried, user stages).
   */
  mayHoldRefs: boolean;
}

/**
 * The prepare pipeline (docs/format.md, What is never written): `stripTransientFields`,
 * `externalizeImages`, `truncateStrings`, then the user stages, and the entry serialized for disk.
 * Returns the same entry object when nothing changed; the input is never mutated. Blob writes are
 * returned, not performed: the caller stores them before writing the line. One structural walk of the entry (`scanStages`: node count, not
 * bytes) decides which built-in stages run; the common entry (no image, no transient key, no giant
 * string) is then serialized once, and an image entry only after its payloads became refs.
 */
export function prepareLine(entry: SessionEntry, options: ResolvedPrepareOptions, sourceText?: string): PreparedLine {
  try {
    return prepareLineUnguarded(entry, options, sourceText);
  } catch (err) {
    if (err instanceof RangeError)
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Entry ${String(entry.id)} is nested too deeply to serialize (${err.message})`, {
        cause: err,
      });
    throw err;
  }
}

function prepareLineUnguarded(entry: SessionEntry, options: ResolvedPrepareOptions, sourceText?: string): PreparedLine {
  let scan: StageScan;
  // An entry given as an object (an append, a rewrite from memory) is held to MAX_ENTRY_DEPTH.
  const maxDepth = sourceText === undefined ? MAX_ENTRY_DEPTH : Number.POSITIVE_INFINITY;
  try {
    scan = scanStages(entry, options.transientKeys, options.maxStringChars, options.blobThreshold, maxDepth);
  } catch (err) {
    if (err instanceof TooDeep)
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Entry ${String(entry.id)} is ${err.message}; it is not stored`);
    // Text read from a file, deeper than the walk's stack: the substring checks decide, as JSON.stringify does.
    if (err instanceof RangeError) return prepareLineBySubstrings(entry, options, sourceText);
    throw err;
  }
  // The common entry: nothing to strip, externalize or cut, and no user stage.
  if (!scan.strip && !scan.images && !scan.cut && options.stages.length === 0) {
    return { line: JSON.stringify(entry), entry, blobs: [], imagesKeptInline: 0, mayHoldRefs: scan.refs };
  }
  // User stages are asked about the entry's own JSON; serialized only when one of them asks.
  const ownJson = sourceText === undefined;
  const probe = ownJson && options.stages.some((s) => s.needed !== undefined) ? JSON.stringify(entry) : undefined;
  const needs: StageNeeds = { ...scan, user: probe === undefined ? options.stages : userStagesNeeded(probe, options.stages, true) };
  if (needs.user.length === 0 && !needs.strip && !needs.images && !needs.cut) {
    return { line: probe ?? JSON.stringify(entry), entry, blobs: [], imagesKeptInline: 0, mayHoldRefs: scan.refs };
  }
  const prepared = runStages(entry, options, needs);
  const line = prepared.entry === entry && probe !== undefined ? probe : JSON.stringify(prepared.entry);
  return { ...prepared, line, mayHoldRefs: scan.refs || prepared.blobs.length > 0 || needs.user.length > 0 };
}

/** The entry's JSON decides which stages run (substring checks); for entries the walk cannot scan. */
function prepareLineBySubstrings(entry: SessionEntry, options: ResolvedPrepareOptions, sourceText?: string): PreparedLine {
  // A caller that just parsed the entry passes its text: the checks run on it.
  const probe = sourceText ?? JSON.stringify(entry);
  // Text from another writer may spell a key with escapes (`"partial\u004ason"`) the checks cannot see.
  const hidden = sourceText !== undefined && mayHideText(sourceText);
  const needs: StageNeeds = {
    strip: hidden || stripNeeded(probe, options.transientMarkers),
    images: hidden || externalizeNeeded(probe, options.blobThreshold),
    cut: truncateNeeded(probe, options.maxStringChars),
    user: userStagesNeeded(probe, options.stages, sourceText === undefined),
  };
  if (needs.user.length === 0 && !needs.strip && !needs.images && !needs.cut) {
    const line = sourceText === undefined ? probe : JSON.stringify(entry);
    return { line, entry, blobs: [], imagesKeptInline: 0, mayHoldRefs: line.includes(BLOB_REF_PREFIX) };
  }
  const prepared = runStages(entry, options, needs);
  const line = prepared.entry === entry && sourceText === undefined ? probe : JSON.stringify(prepared.entry);
  return { ...prepared, line, mayHoldRefs: line.includes(BLOB_REF_PREFIX) };
}

/**
 * True when JSON text escapes a printable ASCII character (`\u0041`…`\u007f`) or `/`: then a key
 * or marker may not appear verbatim. `JSON.stringify` never writes such escapes, so lines written
 * by it are never walked for this reason.
 */
function mayHideText(text: string): boolean {
  return ESCAPED_PRINTABLE.test(text);
}

const ESCAPED_PRINTABLE = /\\u00[2-7][0-9a-fA-F]|\\\//;

/** The user stages whose `needed` does not rule them out (asked only when `probe` is the entry's own JSON). */
function userStagesNeeded(probe: string, stages: readonly PrepareStage[], ownJson: boolean): readonly PrepareStage[] {
  if (stages.length === 0) return NO_STAGES;
  if (!ownJson) return stages;
  return stages.filter((stage) => stage.needed === undefined || stage.needed(probe));
}
