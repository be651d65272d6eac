import type { Readable } from "node:stream";
import { TranscriptStoreError } from "../errors.ts";
import { LineSplitter, type ScannedLine } from "../format/line-splitter.ts";

const CR = 0x0d;

/**
 * Reads NDJSON from a stream: one JSON value per line, blank lines skipped, a `\r` before the `\n`
 * tolerated. Lines are cut from the bytes by the chunked scanner, which gathers a long line from
 * its pieces once, so the work is linear in the input however long its lines are (a 32 MiB line
 * of inlined images included). Invalid JSON throws `INVALID_OPTION` naming the line.
 */
export async function readNdjson(stream: Readable): Promise<unknown[]> {
  const values: unknown[] = [];
  const onLine = (line: ScannedLine) => {
    let bytes = line.bytes;
    if (bytes.length > 0 && bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, bytes.length - 1);
    const text = bytes.toString("utf8");
    if (text.trim().length === 0) return;
    try {
      values.push(JSON.parse(text));
    } catch (err) {
      throw new TranscriptStoreError(
        "INVALID_OPTION",
        `stdin is not NDJSON: line ${line.lineNumber} (after record ${values.length}): ${(err as Error).message}`,
      );
    }
  };
  const splitter = new LineSplitter(onLine);
  for await (const chunk of stream) {
    if (typeof chunk === "string") splitter.push(Buffer.from(chunk, "utf8"));
    else splitter.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  }
  splitter.end();
  return values;
}
