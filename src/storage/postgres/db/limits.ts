import { TranscriptStoreError } from "../../../errors.ts";
import { isColumnText } from "./column-text.ts";

/*
 * Every value the store sends or reads stays within three limits: PostgreSQL holds less than 1 GiB
 * in one field and accepts less than 1 GiB in one protocol message; V8 builds no string longer than
 * about 2^29 characters (pg sends an array parameter, `bytea[]` or `text[]`, as ONE string literal,
 * a bytea as hex: two characters a byte); and one statement should not hold the whole of a batch's
 * images in memory at once. So blobs travel as binary parameters, a group of small ones per
 * statement, a large one in parts; lines go in `text[]` arrays of bounded size, a huge line alone;
 * and a line or blob over what one field holds is refused before anything is stored.
 */

/** What one PostgreSQL field (and one protocol message) holds, less 1 MiB for the rest of a statement. */
export const MAX_FIELD_BYTES = 1024 ** 3 - 1024 ** 2;

/** Sizes every statement and value of a `PgStore` is kept within. */
export interface PgLimits {
  /** Bytes of blobs per statement; a larger blob is sent and read in parts of this size. @default 64 MiB */
  blobPartBytes: number;
  /** Characters of lines per `text[]` parameter; a longer line is sent alone, as plain text. @default 32 Mi */
  arrayChars: number;
  /** The largest line (UTF-8 bytes) stored; a longer one is refused (`PERSISTENCE_FAILED`). @default MAX_FIELD_BYTES */
  maxLineBytes: number;
  /** The largest blob stored; a larger one is refused (`PERSISTENCE_FAILED`). @default MAX_FIELD_BYTES */
  maxBlobBytes: number;
}

/** The limits a store uses unless told otherwise (tests pass smaller ones to reach every path cheaply). */
export const DEFAULT_LIMITS: Readonly<PgLimits> = {
  blobPartBytes: 64 * 1024 * 1024,
  arrayChars: 32 * 1024 * 1024,
  maxLineBytes: MAX_FIELD_BYTES,
  maxBlobBytes: MAX_FIELD_BYTES,
};

/** `options` over the defaults, each a positive integer no larger than its default (`INVALID_OPTION`). */
export function resolveLimits(options: Partial<PgLimits> = {}): PgLimits {
  const limits = { ...DEFAULT_LIMITS, ...options };
  for (const [name, value] of Object.entries(limits) as Array<[keyof PgLimits, number]>) {
    if (!Number.isSafeInteger(value) || value < 1 || value > DEFAULT_LIMITS[name]) {
      throw new TranscriptStoreError("INVALID_OPTION", `limits.${name} must be an integer from 1 to ${DEFAULT_LIMITS[name]}, not ${value}`);
    }
  }
  return limits;
}

/**
 * Refuses (`PERSISTENCE_FAILED`), before anything is sent, a line longer than one field holds, or
 * one holding a raw NUL or lone surrogate (`text` refuses the one and pg would send U+FFFD for the
 * other: the line would not stay exact). JSON escapes both, so no serialized entry holds either.
 */
export function checkLine(line: string, limits: PgLimits): void {
  if (!isColumnText(line)) {
    throw new TranscriptStoreError("PERSISTENCE_FAILED", "A line holds a raw NUL or a lone surrogate: it would not be stored exactly");
  }
  checkLineSize(line, limits);
}

/** Refuses (`PERSISTENCE_FAILED`) a line longer than one field holds (a serialized entry needs no more: JSON escapes the rest). */
export function checkLineSize(line: string, limits: PgLimits): void {
  // a UTF-16 unit is at most 3 UTF-8 bytes: most lines need no count
  if (line.length * 3 <= limits.maxLineBytes) return;
  const bytes = Buffer.byteLength(line);
  if (bytes > limits.maxLineBytes) {
    throw new TranscriptStoreError(
      "PERSISTENCE_FAILED",
      `An entry of ${bytes} bytes is over the ${limits.maxLineBytes} bytes one row holds`,
    );
  }
}

/** Refuses (`PERSISTENCE_FAILED`) a blob larger than one field holds, before anything is sent. */
export function checkBlobSize(size: number, limits: PgLimits): void {
  if (size > limits.maxBlobBytes) {
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `A blob of ${size} bytes is over the ${limits.maxBlobBytes} bytes one row holds`);
  }
}
