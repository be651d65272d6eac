import { TranscriptStoreError } from "../errors.ts";

/**
 * Every file name the artifacts directory may hold is built here, from parts validated against
 * a closed character set. Nothing a caller or a model supplies (id, name, tool type, URL) ever
 * reaches `path.join` unchecked, so no input can address a path outside the directory.
 */

/** The tool type used when the requested one is not a safe file-name part (docs/artifacts.md, File names). */
export const DEFAULT_TOOL_TYPE = "tool";

/** The agent output name used when nothing readable survives sanitizing. */
export const DEFAULT_AGENT_NAME = "agent";

/** Longest tool type and longest agent-name segment kept (docs/artifacts.md, File names). */
export const MAX_NAME_PART = 64;

/**
 * Longest agent output id (prefix segments included). `<id>.md` plus a `-NNN` suffix stays well
 * under the 255-byte file-name limit of common file systems.
 */
export const MAX_AGENT_OUTPUT_ID = 200;

/** Decimal ids beyond this would lose precision as JS numbers. */
const MAX_ID_DIGITS = 15;

const SAFE_PART = /^[A-Za-z0-9_-]+$/;
const NUMERIC_ID = /^\d+$/;
const AGENT_OUTPUT_ID = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;

/** `<id>.<toolType>.log`: the content file of an artifact. */
export const LOG_FILE = /^(\d+)\.([A-Za-z0-9_-]{1,64})\.log$/;
/** `<id>.meta.json`: the metadata (or tombstone, or pending claim) of an artifact. */
export const META_FILE = /^(\d+)\.meta\.json$/;
/** `<id>.md`: an agent output. */
export const AGENT_OUTPUT_FILE = /^([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\.md$/;
/** Any name that starts with a decimal id: counted when choosing the next id, whatever it is. */
export const ID_PREFIXED = /^(\d+)\./;

/**
 * A tool type is kept when it is 1–64 characters of `[A-Za-z0-9_-]`, else it becomes `tool`
 * (docs/artifacts.md, File names). Replacing instead of repairing keeps the rule obvious to anyone
 * reading file names.
 */
export function sanitizeToolType(toolType: unknown): string {
  if (typeof toolType === "string" && toolType.length <= MAX_NAME_PART && SAFE_PART.test(toolType)) return toolType;
  return DEFAULT_TOOL_TYPE;
}

/**
 * Turns a requested agent name into one file-name segment: characters outside `[A-Za-z0-9_-]`
 * become `_` (so `Code Reviewer` stays readable as `Code_Reviewer`), the result is cut to 64
 * characters, and a name with no letter or digit left (`..`, `/`) becomes `agent`.
 */
export function sanitizeAgentName(name: unknown): string {
  const raw = typeof name === "string" ? name : "";
  const cleaned = raw.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, MAX_NAME_PART);
  return /[A-Za-z0-9]/.test(cleaned) ? cleaned : DEFAULT_AGENT_NAME;
}

/** True for a canonical artifact id as this store writes it (`0`, `17`; no sign, no exponent). */
export function isArtifactId(value: string): boolean {
  return NUMERIC_ID.test(value) && value.length <= MAX_ID_DIGITS;
}

/**
 * Parses the id of an `artifact://<id>` URL. Leading zeros are tolerated (`007` is artifact 7);
 * anything else that is not plain decimal digits (`1e3`, `../x`, `-1`, ``) is refused.
 */
export function parseArtifactId(raw: string): string {
  if (!isArtifactId(raw)) throw new TranscriptStoreError("INVALID_ARTIFACT_ID", `artifact:// ID must be numeric, got: ${raw}`);
  return String(Number(raw));
}

/** True for an agent output id: dot-separated segments of `[A-Za-z0-9_-]`, bounded length. */
export function isAgentOutputId(value: string): boolean {
  return value.length <= MAX_AGENT_OUTPUT_ID + 8 && AGENT_OUTPUT_ID.test(value);
}

/** Throws `INVALID_ARTIFACT_ID` unless `value` is a valid agent output id. */
export function assertAgentOutputId(value: unknown): string {
  if (typeof value !== "string" || !isAgentOutputId(value)) {
    throw new TranscriptStoreError("INVALID_ARTIFACT_ID", `Invalid agent output id: ${JSON.stringify(String(value)).slice(0, 120)}`);
  }
  return value;
}

/** File name of an artifact's content. Both parts must already be validated. */
export function logFileName(id: string, toolType: string): string {
  return `${id}.${toolType}.log`;
}

/** File name of an artifact's metadata. */
export function metaFileName(id: string): string {
  return `${id}.meta.json`;
}

/** File name of an agent output. */
export function agentOutputFileName(id: string): string {
  return `${id}.md`;
}
