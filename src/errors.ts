/** The closed set of error codes callers branch on (each explained in src/error-catalogue.ts, docs/errors.md). */
export const ERROR_CODES = [
  "SESSION_LOCKED",
  "SESSION_NOT_FOUND",
  "SESSION_AMBIGUOUS",
  "SESSION_EXISTS",
  "OUTPUT_EXISTS",
  "BAD_HEADER",
  "READ_ONLY",
  "ENTRY_NOT_FOUND",
  "PERSISTENCE_FAILED",
  "INVALID_BLOB_REF",
  "BLOB_CORRUPT",
  "BLOB_MISSING",
  "ARTIFACT_NOT_FOUND",
  "INVALID_ARTIFACT_ID",
  "NO_SESSION",
  "INVALID_QUERY",
  "MOVE_FAILED",
  "INVALID_OPTION",
  "REFERRER_MISSING",
  "STORE_BUSY",
  "IMPORT_CONFLICT",
  "NO_INPUT",
  "SCHEMA_MISMATCH",
  "INDEX_UNAVAILABLE",
  "INVALID_CONFIG",
  "SESSION_PINNED",
  "BUNDLE_CORRUPT",
  "KEY_REQUIRED",
  "DECRYPT_FAILED",
  "NOT_SUPPORTED",
  "NOT_ENCRYPTED",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Codes that are only ever reported as warnings, never thrown. */
export type WarningCode =
  | ErrorCode
  | "TORN_TAIL_REPAIRED"
  | "MALFORMED_LINES"
  | "LOCK_COMPROMISED"
  | "NUL_BYTES_SKIPPED"
  | "ARTIFACT_COPY_FAILED"
  | "IMAGE_NOT_EXTERNALIZED"
  | "IMAGE_TOO_LARGE"
  | "GLUED_RECORDS_SPLIT"
  | "INDEX_REBUILT"
  | "SECRET_REDACTED"
  | "EXTENSION_KEPT"
  | "PLAIN_SESSION"
  | "EXPORT_INCOMPLETE";

export interface TranscriptStoreErrorOptions {
  path?: string;
  cause?: unknown;
}

/** The single error class of the library: branch on `code`, never on the message. */
export class TranscriptStoreError extends Error {
  readonly code: ErrorCode;
  readonly path?: string;

  constructor(code: ErrorCode, message: string, options: TranscriptStoreErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "TranscriptStoreError";
    this.code = code;
    if (options.path !== undefined) this.path = options.path;
  }
}

/** One session an ambiguous id prefix matched: what a person needs to pick it. */
export interface SessionCandidate {
  id: string;
  /** Its title, else the first user message, else null. */
  title: string | null;
  /** When it was last active. */
  modified: Date;
  /** Its file (the file store); absent in a database store. */
  path?: string;
}

/** Candidates named in the message and carried on the error. */
export const MAX_CANDIDATES = 10;

/**
 * `SESSION_AMBIGUOUS` for a prefix that matches several sessions. The message's first line says
 * how many; each candidate follows on its own line (id, time, title), as git lists the objects a
 * short SHA matches. `candidates` holds them for a caller that prints them itself (the CLI).
 */
export class SessionAmbiguousError extends TranscriptStoreError {
  readonly candidates: SessionCandidate[];

  constructor(needle: string, matched: SessionCandidate[], more = false) {
    const shown = matched.slice(0, MAX_CANDIDATES);
    const count = more || matched.length > shown.length ? `more than ${shown.length}` : String(matched.length);
    const lines = shown.map((c) => `  ${candidateLine(c)}`);
    super("SESSION_AMBIGUOUS", [`${JSON.stringify(needle)} matches ${count} sessions; give more of the id:`, ...lines].join("\n"));
    this.candidates = shown;
  }
}

/** `<id>  <YYYY-MM-DD HH:MM>  <title>`: one candidate's line (the time in UTC). */
export function candidateLine(c: SessionCandidate): string {
  const time = Number.isNaN(c.modified.getTime()) ? "-" : c.modified.toISOString().slice(0, 16).replace("T", " ");
  return `${c.id}  ${time}  ${c.title ?? "(untitled)"}`;
}

/** A non-fatal problem, delivered through the `onWarning` option. */
export interface StoreWarning {
  code: WarningCode;
  message: string;
  path?: string;
}

export type WarningHandler = (warning: StoreWarning) => void;

/** True when `err` is a TranscriptStoreError, optionally with the given code. */
export function isStoreError(err: unknown, code?: ErrorCode): err is TranscriptStoreError {
  return err instanceof TranscriptStoreError && (code === undefined || err.code === code);
}

/** The errno code of a Node system error, if any. */
export function errnoCode(err: unknown): string | undefined {
  if (err && typeof err === "object" && "code" in err && typeof (err as { code: unknown }).code === "string") {
    return (err as { code: string }).code;
  }
  return undefined;
}
