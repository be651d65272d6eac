import { type ErrorCode, errnoCode, TranscriptStoreError } from "../../../errors.ts";

/** SQLSTATE of a server error (`23505`, `57P01`, …), if any. */
export function sqlState(err: unknown): string | undefined {
  const code = errnoCode(err);
  return code !== undefined && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * SQLSTATE classes and codes that mean the connection or the server went away (the outcome may be
 * unknown); 25P03: the server ended a transaction left idle too long (see fenceSession).
 */
const CONNECTION_STATES = /^(08|57P0[1-3]|53300|25P03)/;

/** True when `err` is a lost or refused connection rather than a statement the server rejected. */
export function isConnectionError(err: unknown): boolean {
  const state = sqlState(err);
  if (state !== undefined) return CONNECTION_STATES.test(state);
  const code = errnoCode(err);
  if (code !== undefined) return /^E[A-Z]+$/.test(code);
  return err instanceof Error && /Connection terminated|connection|Client has encountered|not queryable/i.test(err.message);
}

/**
 * Wraps anything a database call threw as a `TranscriptStoreError`: one of ours passes through; a
 * lost connection, a failed commit or any other server error is `PERSISTENCE_FAILED` with the cause.
 */
export function toStoreError(err: unknown, doing: string, code: ErrorCode = "PERSISTENCE_FAILED"): TranscriptStoreError {
  if (err instanceof TranscriptStoreError) return err;
  const what = isConnectionError(err) ? "the database connection failed" : "the database refused it";
  const detail = err instanceof Error ? err.message : String(err);
  return new TranscriptStoreError(code, `${doing}: ${what} (${detail})`, { cause: err });
}

/** True when `err` (or the database error it wraps) is a foreign key violation (SQLSTATE 23503). */
export function isForeignKeyViolation(err: unknown): boolean {
  return sqlState(err) === "23503" || (err instanceof Error && sqlState(err.cause) === "23503");
}
