import { isUtf8 } from "node:buffer";
import { createReadStream } from "node:fs";
import { jsonDepthExceeds, MAX_ENTRY_DEPTH } from "../format/json-depth.ts";
import { LineSplitter, type ScannedLine } from "../format/line-splitter.ts";

/** Why a line of another agent's transcript is not a record (the report's codes). */
export type ForeignLineProblem = "BAD_JSON" | "TORN_LINE" | "INVALID_UTF8" | "EMPTY_LINE" | "NESTED_TOO_DEEP";

/** One line of a foreign transcript: a JSON value, or the line's exact text / bytes with the problem. */
export type ForeignLine =
  | { kind: "record"; line: number; value: unknown }
  | { kind: "damaged"; line: number; code: ForeignLineProblem; reason: string; text?: string; base64?: string; terminated: boolean };

/** Deepest record import maps (deeper: kept as its text, `NESTED_TOO_DEEP`). */
export const MAX_RECORD_DEPTH = MAX_ENTRY_DEPTH - 2;

/** Classifies one line's bytes (pure). `terminated`: the line ended with `\n`. */
export function decodeForeignLine(scanned: Pick<ScannedLine, "bytes" | "lineNumber" | "terminated">): ForeignLine {
  const { bytes, lineNumber: line, terminated } = scanned;
  if (!isUtf8(bytes)) {
    return { kind: "damaged", line, code: "INVALID_UTF8", reason: "invalid UTF-8", base64: bytes.toString("base64"), terminated };
  }
  const text = bytes.toString("utf8");
  if (text.trim().length === 0) return { kind: "damaged", line, code: "EMPTY_LINE", reason: "empty line", text, terminated };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const code = terminated ? "BAD_JSON" : "TORN_LINE";
    return { kind: "damaged", line, code, reason: `invalid JSON: ${(err as Error).message}`, text, terminated };
  }
  // checked before any walk (the mappers, the prepare pipeline, redaction): such a line is kept as its
  // text. The record sits two levels down in its entry (`foreign.record`), which is held to MAX_ENTRY_DEPTH.
  if (jsonDepthExceeds(value, MAX_RECORD_DEPTH)) {
    return { kind: "damaged", line, code: "NESTED_TOO_DEEP", reason: `nested deeper than ${MAX_RECORD_DEPTH} levels`, text, terminated };
  }
  return { kind: "record", line, value };
}

/**
 * The lines of a file, one at a time: the file is read in chunks and cut at `\n` by the byte
 * splitter, so a multi-gigabyte transcript never becomes one string (one line at most). `size`:
 * read only the first `size` bytes (the length seen once, so that every pass over a transcript
 * still being written reads the same lines).
 */
export async function* readForeignLines(path: string, size?: number): AsyncGenerator<ForeignLine> {
  if (size === 0) return;
  const pending: ForeignLine[] = [];
  const splitter = new LineSplitter((l) => pending.push(decodeForeignLine(l)));
  const range = size === undefined ? {} : { end: size - 1 };
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20, ...range })) {
    splitter.push(chunk as Buffer);
    yield* pending.splice(0);
  }
  splitter.end();
  yield* pending.splice(0);
}
