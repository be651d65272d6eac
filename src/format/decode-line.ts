import { isUtf8 } from "node:buffer";
import { isRecord, type RawRecord } from "./types.ts";

/** What a line turned out to be. Problems are values, not exceptions. */
export type DecodedLine =
  | { kind: "record"; value: RawRecord; text: string; nulBytes: number }
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
    return { kind: "malformed", reason: `invalid JSON: ${(err as Error).message}`, nulBytes };
  }
  if (!isRecord(value)) return { kind: "malformed", reason: "line is not a JSON object", nulBytes };
  if (typeof value.type !== "string") return { kind: "malformed", reason: "object has no string \"type\"", nulBytes };
  return { kind: "record", value, text, nulBytes };
}

/** Strips a UTF-8 byte order mark from the first line. */
export function stripBom(bytes: Buffer): Buffer {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
}
