import { isArtifactId, LOG_FILE, logFileName, sanitizeToolType } from "./artifact-names.ts";

/**
 * Per-artifact metadata lives beside the content as `<id>.meta.json`, inside the artifacts
 * directory, so it survives restart and travels with the directory when a session is forked or
 * moved. The file holds no absolute path (paths are derived from the store's directory at read
 * time) and is only ever replaced by rename, never edited, because a fork hard-links it.
 */

/** How the content file maps back to the value that was saved. */
export type ArtifactEncoding = "text" | "json" | "bytes";

/** What `save`, `getRef` and `list` return (docs/artifacts.md, Metadata and references). */
export interface ArtifactRef {
  /** Decimal id, unique in the directory (`"0"`, `"1"`, …). */
  id: string;
  /** `artifact://<id>`. */
  uri: string;
  /** Absolute path of the content file, derived from the store's current directory. */
  path: string;
  toolType: string;
  /** Alias: `get(name)` finds the newest artifact saved under it. */
  name?: string;
  summary: string;
  /** Bytes of the content file. */
  sizeBytes: number;
  /** Epoch milliseconds, from the store's clock. */
  createdAt: number;
  /** Epoch milliseconds after which the artifact reads as absent. */
  expiresAt?: number;
  contentType: string;
}

/** The persisted form (version 1). */
export interface ArtifactMeta {
  v: 1;
  id: string;
  toolType: string;
  name?: string;
  summary?: string;
  sizeBytes?: number;
  createdAt: number;
  expiresAt?: number;
  contentType: string;
  encoding: ArtifactEncoding;
}

/** What reading a metadata file can find. */
export type MetaState =
  | { kind: "meta"; meta: ArtifactMeta }
  /** A removed artifact whose id must never be handed out again. */
  | { kind: "tombstone" }
  /** An id claimed by a writer that has not finished (or crashed before finishing). */
  | { kind: "pending" }
  | { kind: "missing" }
  | { kind: "corrupt"; reason: string };

/** Number of characters of content a default summary keeps (docs/artifacts.md, Metadata and references). */
export const SUMMARY_CHARS = 200;

const CONTENT_TYPES: Record<ArtifactEncoding, string> = {
  text: "text/plain",
  json: "application/json",
  bytes: "application/octet-stream",
};

/** The content type recorded when the caller gives none. */
export function defaultContentType(encoding: ArtifactEncoding): string {
  return CONTENT_TYPES[encoding];
}

/**
 * Cuts a string to at most `max` UTF-16 units without splitting a surrogate pair, so a preview
 * or summary is always valid text.
 */
export function cutChars(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end);
}

/** The default summary: the first 200 characters, each line break as one space. */
export function summarize(text: string, max = SUMMARY_CHARS): string {
  // Cut a little past `max` first so a huge artifact is not scanned whole; CRLF shrinks by one.
  return cutChars(cutChars(text, max * 2).replace(/\r\n|\r|\n/g, " "), max);
}

/** Serializes metadata as one JSON line. */
export function encodeMeta(meta: ArtifactMeta): Buffer {
  return Buffer.from(`${JSON.stringify(meta)}\n`, "utf8");
}

/** Serializes the tombstone of a removed id. */
export function encodeTombstone(id: string): Buffer {
  return Buffer.from(`${JSON.stringify({ v: 1, id, removed: true })}\n`, "utf8");
}

function optionalNumber(value: unknown): value is number | undefined {
  return value === undefined || (typeof value === "number" && Number.isFinite(value) && value >= 0);
}

/**
 * Parses a metadata file found under `<expectedId>.meta.json`. Every field is checked: the tool
 * type in particular becomes part of a file name, so a tampered value is treated as corrupt
 * rather than trusted.
 */
export function decodeMeta(bytes: Buffer, expectedId: string): MetaState {
  if (bytes.length === 0) return { kind: "pending" };
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString("utf8"));
  } catch (err) {
    return { kind: "corrupt", reason: `not JSON (${(err as Error).message})` };
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return { kind: "corrupt", reason: "not an object" };
  const m = raw as Record<string, unknown>;
  if (m.v !== 1) return { kind: "corrupt", reason: `unknown version ${String(m.v)}` };
  if (m.id !== expectedId) return { kind: "corrupt", reason: `id ${String(m.id)} does not match its file name` };
  if (m.removed === true) return { kind: "tombstone" };
  if (typeof m.toolType !== "string" || sanitizeToolType(m.toolType) !== m.toolType) return { kind: "corrupt", reason: "bad toolType" };
  if (typeof m.createdAt !== "number" || !Number.isFinite(m.createdAt)) return { kind: "corrupt", reason: "bad createdAt" };
  if (!optionalNumber(m.expiresAt) || !optionalNumber(m.sizeBytes)) return { kind: "corrupt", reason: "bad number field" };
  if (m.name !== undefined && typeof m.name !== "string") return { kind: "corrupt", reason: "bad name" };
  if (m.summary !== undefined && typeof m.summary !== "string") return { kind: "corrupt", reason: "bad summary" };
  if (typeof m.contentType !== "string") return { kind: "corrupt", reason: "bad contentType" };
  if (m.encoding !== "text" && m.encoding !== "json" && m.encoding !== "bytes") return { kind: "corrupt", reason: "bad encoding" };
  const meta: ArtifactMeta = {
    v: 1,
    id: expectedId,
    toolType: m.toolType,
    createdAt: m.createdAt,
    contentType: m.contentType,
    encoding: m.encoding,
  };
  if (m.name !== undefined) meta.name = m.name;
  if (m.summary !== undefined) meta.summary = m.summary;
  if (m.sizeBytes !== undefined) meta.sizeBytes = m.sizeBytes as number;
  if (m.expiresAt !== undefined) meta.expiresAt = m.expiresAt as number;
  return { kind: "meta", meta };
}

/** Metadata for a content file that has none (written by another tool, or its meta was lost). */
export function deriveMeta(logName: string, mtimeMs: number): ArtifactMeta | null {
  const match = LOG_FILE.exec(logName);
  // Only canonical ids (`7`, not `007`): the derived record must name this very file.
  if (!match || !isArtifactId(match[1]!) || String(Number(match[1])) !== match[1]) return null;
  return {
    v: 1,
    id: match[1]!,
    toolType: match[2]!,
    createdAt: Math.floor(mtimeMs),
    contentType: defaultContentType("text"),
    encoding: "text",
  };
}

/** The content file name a metadata record points at. */
export function logNameOf(meta: ArtifactMeta): string {
  return logFileName(meta.id, meta.toolType);
}

/** True when the artifact has expired at `now`. */
export function isExpired(meta: { expiresAt?: number }, now: number): boolean {
  return meta.expiresAt !== undefined && now >= meta.expiresAt;
}
