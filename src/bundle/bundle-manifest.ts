import { TranscriptStoreError } from "../errors.ts";
import { isRecord } from "../format/types.ts";

/**
 * The manifest of a bundle (a tar archive, docs/bundles.md): which sessions it holds and, for every
 * other member, its size and sha256. `unbundle` checks every member against it before it writes
 * anything. Pure: names, shapes and checks, no I/O.
 */

/** What `format` says in every bundle's manifest. */
export const BUNDLE_FORMAT = "transcript-store-bundle";
/** The manifest version this code writes and reads. */
export const BUNDLE_VERSION = 1;
/** The manifest's member name: the last member of the archive. */
export const MANIFEST_NAME = "manifest.json";

export interface ManifestSession {
  id: string;
  /** Its members' folder in the archive: `sessions/<n>`. */
  dir: string;
  /** Entry lines (each ends in `\n` in `lines.jsonl`). */
  lines: number;
  /** Quarantine records (`quarantine.jsonl`). */
  quarantine: number;
  /** Artifact files (`artifacts/<name>`). */
  artifacts: number;
}

export interface ManifestMember {
  name: string;
  size: number;
  sha256: string;
}

export interface BundleManifest {
  format: typeof BUNDLE_FORMAT;
  version: typeof BUNDLE_VERSION;
  sessions: ManifestSession[];
  /** Every member but the manifest, in archive order. */
  members: ManifestMember[];
  /** Blobs the sessions' lines reference that their store lacked (the bundle cannot carry them). */
  missingBlobs: string[];
  /**
   * Whether the sessions' text (header, lines, quarantine records, artifact files) was redacted for
   * sharing (`bundle`'s default); absent in a bundle written before bundles were redacted.
   */
  redacted?: boolean;
  /** With `redacted`: the secrets replaced, per rule id (never a secret). */
  redactions?: Record<string, number>;
}

/** A session's member names. */
export const sessionDir = (index: number) => `sessions/${index}`;
export const headerMember = (dir: string) => `${dir}/header.jsonl`;
export const linesMember = (dir: string) => `${dir}/lines.jsonl`;
export const quarantineMember = (dir: string) => `${dir}/quarantine.jsonl`;
export const artifactMember = (dir: string, name: string) => `${dir}/artifacts/${name}`;
export const blobMember = (hash: string) => `blobs/${hash}`;

const HASH = /^[0-9a-f]{64}$/;
const SESSION_MEMBER = /^sessions\/(\d+)\/(header\.jsonl|lines\.jsonl|quarantine\.jsonl|artifacts\/.+)$/;
const BLOB_MEMBER = /^blobs\/([0-9a-f]{64})$/;

/** The refusal of a bundle that does not match its manifest (nothing written). */
export function bundleCorrupt(message: string, path?: string): TranscriptStoreError {
  return new TranscriptStoreError("BUNDLE_CORRUPT", `bundle refused, nothing written: ${message}`, path === undefined ? {} : { path });
}

/**
 * Null when `name` is a relative path of plain segments; else why not (absolute, `..`, `.`, an
 * empty segment, a backslash or a NUL): such a member is refused before anything is read from it.
 */
export function unsafeMemberName(name: string): string | null {
  if (name.length === 0) return "an empty name";
  if (name.startsWith("/")) return "an absolute path";
  if (name.includes("\\") || name.includes("\0")) return "a backslash or NUL in the name";
  for (const part of name.split("/")) {
    if (part === "..") return "a `..` segment (a path out of the bundle)";
    if (part === "" || part === ".") return "an empty or `.` segment";
  }
  return null;
}

/** What a member name is: a session's part, a blob, or null (a name no bundle holds). */
export function classifyMember(
  name: string,
): { kind: "session"; dir: string; part: string } | { kind: "blob"; hash: string } | { kind: "manifest" } | null {
  if (name === MANIFEST_NAME) return { kind: "manifest" };
  const s = SESSION_MEMBER.exec(name);
  if (s !== null) return { kind: "session", dir: `sessions/${s[1]}`, part: s[2]! };
  const b = BLOB_MEMBER.exec(name);
  return b === null ? null : { kind: "blob", hash: b[1]! };
}

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** The manifest's JSON text as a checked value (`BUNDLE_CORRUPT` naming the first thing wrong). */
export function parseManifest(text: string): BundleManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bundleCorrupt("its manifest is not JSON");
  }
  if (!isRecord(value) || value.format !== BUNDLE_FORMAT) throw bundleCorrupt(`its manifest is not a ${BUNDLE_FORMAT} manifest`);
  if (value.version !== BUNDLE_VERSION) {
    throw bundleCorrupt(`manifest version ${JSON.stringify(value.version)} (this version reads ${BUNDLE_VERSION})`);
  }
  const { sessions, members, missingBlobs } = value;
  if (!Array.isArray(sessions) || !Array.isArray(members) || !Array.isArray(missingBlobs)) {
    throw bundleCorrupt("its manifest lacks sessions, members or missingBlobs");
  }
  for (const s of sessions) {
    const ok =
      isRecord(s) &&
      typeof s.id === "string" &&
      typeof s.dir === "string" &&
      /^sessions\/\d+$/.test(s.dir) &&
      isCount(s.lines) &&
      isCount(s.quarantine) &&
      isCount(s.artifacts);
    if (!ok) throw bundleCorrupt(`manifest session ${JSON.stringify(s)} is malformed`);
  }
  for (const m of members) {
    const ok = isRecord(m) && typeof m.name === "string" && isCount(m.size) && typeof m.sha256 === "string" && HASH.test(m.sha256);
    if (!ok) throw bundleCorrupt(`manifest member ${JSON.stringify(m)} is malformed`);
  }
  if (!missingBlobs.every((h) => typeof h === "string" && HASH.test(h))) throw bundleCorrupt("manifest missingBlobs holds a non-hash");
  if (value.redacted !== undefined && typeof value.redacted !== "boolean") throw bundleCorrupt("manifest redacted is not a boolean");
  const { redactions } = value;
  if (redactions !== undefined && !(isRecord(redactions) && Object.values(redactions).every(isCount))) {
    throw bundleCorrupt("manifest redactions is not a count per rule");
  }
  return value as unknown as BundleManifest;
}
