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
