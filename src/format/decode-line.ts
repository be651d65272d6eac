import { isUtf8 } from "node:buffer";
import { splitGluedObjects } from "./split-glued.ts";
import { isRecord, type RawRecord } from "./types.ts";

/** What a line turned out to be. Problems are values, not exceptions. */
export type DecodedLine =
  | { kind: "record"; value: RawRecord; text: string; nulBytes: number }
  /** Several records written on one line without the newlines between them. */
  | { kind: "glued"; values: RawRecord[]; texts: string[]; nulBytes: number }
  | { kind: "blank"; nulBytes: number }
  | { kind: "malformed"; reason: string; nulBytes: number };

/** Counts leading NUL bytes (a crash on some file systems leaves zero-filled runs). */
function leadingNuls(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  return i;
}

/**
 * Decodes one line's bytes into a JSON object. Leading NUL runs are skipped and counted; a line
 * that is only NULs or whitespace is blank; anything else that is not a JSON object, or is not
 * valid UTF-8, is malformed with a reason.
 */
export function decodeLine(bytes: Buffer): DecodedLine {
  const nulBytes = leadingNuls(bytes);
  const body = nulBytes > 0 ? bytes.subarray(nulBytes) : bytes;
  // One native pass validates the bytes; a replacement character would hide invalid input.
  if (!isUtf8(body)) return { kind: "malformed", reason: "invalid UTF-8", nulBytes };
  let text = body.toString("utf8");
  if (text.length > 0 && text.charCodeAt(text.length - 1) === 0x0d) text = text.slice(0, -1);
  if (text.charCodeAt(0) !== 0x7b && text.trim().length === 0) return { kind: "blank", nulBytes };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return decodeGlued(text, nulBytes) ?? { kind: "malformed", reason: `invalid JSON: ${(err as Error).message}`, nulBytes };
  }
  const problem = recordProblem(value);
  if (problem !== null) return { kind: "malformed", reason: problem, nulBytes };
  return { kind: "record", value: value as RawRecord, text, nulBytes };
}

function recordProblem(value: unknown): string | null {
  if (!isRecord(value)) return "line is not a JSON object";
  if (typeof value.type !== "string") return 'object has no string "type"';
  return null;
}

/** A line that only failed because records were glued together: each one, or null. */
function decodeGlued(text: string, nulBytes: number): DecodedLine | null {
  const texts = splitGluedObjects(text);
  if (texts === null) return null;
  const values: RawRecord[] = [];
  for (const part of texts) {
    let value: unknown;
    try {
      value = JSON.parse(part);
    } catch {
      return null;
    }
    if (recordProblem(value) !== null) return null;
    values.push(value as RawRecord);
  }
  return { kind: "glued", values, texts, nulBytes };
}

/** Strips a UTF-8 byte order mark from the first line. */
export function stripBom(bytes: Buffer): Buffer {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
}
