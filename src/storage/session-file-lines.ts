import { createReadStream } from "node:fs";
import { resolve } from "node:path";
import { errnoCode } from "../errors.ts";
import { decodeLine } from "../format/decode-line.ts";
import { LineSplitter } from "../format/line-splitter.ts";
import { headerVersion } from "../format/migrate.ts";
import { parseSessionBytes } from "../format/session-parser.ts";
import { CURRENT_VERSION, type SessionHeader } from "../format/types.ts";
import { io } from "../io.ts";
import { IdsSeen } from "./id-seen.ts";
import type { SnapshotBytes } from "./session-snapshot.ts";

/**
 * Files read as a snapshot reads them, for any backend and any service (bundles, foreign imports,
 * the CLI's streamed export): a file's lines a chunk at a time, its bytes on demand, and a session
 * file that can be handed out as stored.
 */

/** A file's lines, without their `\n` (a last line without one included), read a chunk at a time. */
export async function* rawLines(path: string): AsyncIterable<string> {
  const pending: string[] = [];
  const splitter = new LineSplitter((line) => pending.push(line.bytes.toString("utf8")));
  for await (const chunk of createReadStream(path)) {
    splitter.push(chunk as Buffer);
    yield* pending.splice(0);
  }
  splitter.end();
  yield* pending.splice(0);
}

/** The file at `path` as bytes read on demand (its size now; each `open()` reads it afresh, a piece at a time). */
export function fileBytes(path: string, size = io.statSync(path).size): SnapshotBytes {
  return { size, open: () => createReadStream(path) as AsyncIterable<Buffer> };
}

export async function* skipFirst(lines: AsyncIterable<string>): AsyncIterable<string> {
  let first = true;
  for await (const line of lines) {
    if (!first) yield line;
    first = false;
  }
}

/**
 * The header of the session file at `path` when `open` would hand out every line of it as it is
 * stored (a current-version header, unencrypted; every other line a JSON record with an id of its
 * own or blank; no NUL run, glued records or torn tail), else null. One pass a chunk at a time:
 * each line is parsed and dropped (its id kept as a 64-bit hash: `IdsSeen`), so a file of any size
 * is checked in little memory.
 */
export async function cleanHeader(path: string): Promise<{ header: SessionHeader; headerLine: string } | null> {
  const ids = new IdsSeen();
  let found: { header: SessionHeader; headerLine: string } | null = null;
  let clean = true;
  const splitter = new LineSplitter((line) => {
    if (!clean) return;
    if (found === null) {
      const parsed = parseSessionBytes(Buffer.concat([line.bytes, Buffer.from("\n")]));
      const header = parsed.header;
      const bom = line.bytes.length >= 3 && line.bytes[0] === 0xef && line.bytes[1] === 0xbb && line.bytes[2] === 0xbf;
      clean =
        header !== null &&
        !bom &&
        line.terminated &&
        parsed.linesRead === 1 &&
        parsed.nulRuns === 0 &&
        headerVersion(header) >= CURRENT_VERSION &&
        header.encryption === undefined;
      if (clean) found = { header: header!, headerLine: line.bytes.toString("utf8") };
      return;
    }
    const decoded = decodeLine(line.bytes);
    if (decoded.nulBytes > 0 || decoded.kind === "malformed" || decoded.kind === "glued") {
      clean = false;
      return;
    }
    if (decoded.kind === "blank") return;
    const id = decoded.value.id;
    if (typeof id !== "string" || id.length === 0 || ids.add(id)) clean = false;
  });
  const stream = createReadStream(path);
  try {
    for await (const chunk of stream) {
      splitter.push(chunk as Buffer);
      if (!clean) {
        stream.destroy();
        return null;
      }
    }
  } catch (err) {
    // no file there, or not one: the loader's refusal (`SESSION_NOT_FOUND`, …) says what it is
    if (errnoCode(err) !== undefined) return null;
    throw err;
  }
  splitter.end();
  return clean ? found : null;
}

/**
 * The session file at `path` when it can be read as stored, a line at a time (`cleanHeader`): its
 * header and its entry lines (each call reads the file anew); null when it must go through the
 * loader (legacy, damaged, encrypted, BOM-prefixed, absent).
 */
export async function streamableFile(
  path: string,
): Promise<{ header: SessionHeader; headerLine: string; lines: () => AsyncIterable<string> } | null> {
  const abs = resolve(path);
  const clean = await cleanHeader(abs);
  return clean === null ? null : { ...clean, lines: () => skipFirst(rawLines(abs)) };
}
