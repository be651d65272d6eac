import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { toBlobRef } from "../blob/blob-ref.ts";
import type { BlobStore } from "../blob/blob-store.ts";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import type { MalformedLine } from "../format/load-report.ts";
import { isRecord } from "../format/types.ts";
import { ensureDir, FILE_MODE, fsyncDir, io, tempPathFor, writeFully } from "../io.ts";
import { decodeCanonicalBase64 } from "../prepare/externalize-images.ts";
import { mapImagePayloads, type PayloadKind } from "../prepare/image-shapes.ts";
import { copyFileRange } from "./quarantine-record.ts";
import { writeSessionFileAtomic } from "./session-file.ts";
import { scanLimits } from "./session-file-reader.ts";

const NOT_BASE64 = /[^A-Za-z0-9+/=]/;
const PLACEHOLDER = toBlobRef("0".repeat(64));
/** A second stand-in of the same length: the slot the payload fills is the one where the two parses differ. */
const PROBE = toBlobRef("1".repeat(64));
const PIECE = 1 << 20;

/** A line too large for one string, with one giant image payload streamed into the blob store. */
interface Externalized {
  offset: number;
  length: number;
  line: Buffer;
}

/**
 * For each too-large line of `path` whose size is one giant image payload (base64 image data or
 * a data URL) plus a little JSON around it: streams the payload into the blob store (hashed and
 * verified on the way, never one string) and rewrites the file with the line's payload replaced by
 * its ref, atomically (temp file + rename; the original stays intact until then). Lines that are
 * not shaped so are left as they are. Returns true when the file was rewritten.
 */
export function externalizeGiantLines(path: string, problems: readonly MalformedLine[], blobs: BlobStore, fsync: boolean): boolean {
  const done: Externalized[] = [];
  for (const problem of problems) {
    if (problem.length === undefined || problem.source !== path) continue;
    const line = externalizeLine(path, problem.offset, problem.length, blobs, fsync);
    if (line !== null) done.push({ offset: problem.offset, length: problem.length, line });
  }
  if (done.length === 0) return false;
  writeSessionFileAtomic(
    path,
    (emit) => {
      let position = 0;
      for (const item of done) {
        copyFileRange(path, position, item.offset - position, PIECE, emit);
        emit(item.line);
        position = item.offset + item.length;
      }
      copyFileRange(path, position, io.statSync(path).size - position, PIECE, emit);
    },
    { fsync },
  );
  return true;
}

function readRange(path: string, offset: number, length: number): Buffer {
  const parts: Buffer[] = [];
  copyFileRange(path, offset, length, PIECE, (data) => parts.push(Buffer.from(data)));
  return Buffer.concat(parts);
}

/** The new line (payload replaced by its ref, stored first), or null when the line is not one giant image. */
function externalizeLine(path: string, offset: number, length: number, blobs: BlobStore, fsync: boolean): Buffer | null {
  const maxRest = scanLimits.keepBytes;
  const head = readRange(path, offset, Math.min(length, maxRest)).toString("latin1");
  // The payload starts with the longest run of base64 characters in the head, after `"` or `,`.
  let start = -1;
  let longest = 0;
  for (const m of head.matchAll(/[A-Za-z0-9+/=]+/g)) {
    if (m[0].length > longest && (head[m.index - 1] === '"' || head[m.index - 1] === ",")) {
      longest = m[0].length;
      start = m.index;
    }
  }
  if (start < 0) return null;
  let kind: PayloadKind = "base64";
  let valueStart = start;
  if (head[start - 1] === ",") {
    const url = head.lastIndexOf('"data:image/', start);
    if (url < 0 || !/^"data:image\/[A-Za-z0-9.+-]+;base64,$/.test(head.slice(url, start))) return null;
    kind = "dataUrl";
    valueStart = url + 1;
  }
  const temp = tempPathFor(join(blobs.dir, "incoming"));
  const hash = createHash("sha256");
  let end: number | null;
  try {
    ensureDir(blobs.dir, fsync);
    const fd = io.openSync(temp, "wx", FILE_MODE);
    try {
      const out = (data: Buffer) => {
        hash.update(data);
        writeFully(fd, data);
      };
      if (kind === "dataUrl") out(Buffer.from(head.slice(valueStart, start), "latin1"));
      end = streamPayload(path, offset + start, length - start, kind, out);
      if (fsync) io.fsyncSync(fd);
    } finally {
      io.closeSync(fd);
    }
    // What is left around the payload must be small enough to parse and check as one string.
    if (end === null || length - end > maxRest) return discard(temp);
    const after = readRange(path, offset + start + end, length - start - end);
    const around = (stand: string) =>
      Buffer.concat([Buffer.from(head.slice(0, valueStart), "latin1"), Buffer.from(stand), after]).toString("utf8");
    const text = around(PLACEHOLDER);
    if (text.indexOf(PLACEHOLDER) !== text.lastIndexOf(PLACEHOLDER) || !payloadSlotIs(text, around(PROBE), kind)) return discard(temp);
    const digest = hash.digest("hex");
    // The blob is in place before the line that references it is written.
    storeBlob(temp, join(blobs.dir, digest), fsync);
    return Buffer.from(text.replace(PLACEHOLDER, toBlobRef(digest)));
  } catch (err) {
    discard(temp);
    if (err instanceof TranscriptStoreError) throw err;
    const message = `Could not move a giant image to the blob store: ${(err as Error).message}`;
    throw new TranscriptStoreError("PERSISTENCE_FAILED", message, { path, cause: err });
  }
}

/**
 * Streams the payload from `offset` up to the first non-base64 byte (which must be its closing
 * quote) through `out`: decoded bytes for base64 (canonical only: re-encoding gives the same
 * text), the characters themselves for a data URL. Returns its length, or null when it is not a
 * well-formed payload.
 */
function streamPayload(path: string, offset: number, max: number, kind: PayloadKind, out: (data: Buffer) => void): number | null {
  let carry = "";
  let length = 0;
  let closed = false;
  let bad = false;
  copyFileRange(path, offset, max, PIECE, (data) => {
    if (closed || bad) return;
    let text = data.toString("latin1");
    const stop = text.search(NOT_BASE64);
    if (stop >= 0) {
      if (text[stop] !== '"') bad = true;
      text = text.slice(0, stop);
      closed = true;
    }
    length += text.length;
    if (kind === "dataUrl") return out(Buffer.from(text, "latin1"));
    text = carry + text;
    // Hold back the last quantum until the closing quote is seen: only it may carry `=` padding.
    const whole = closed ? text.length : Math.max(0, text.length - (text.length % 4) - 4);
    carry = text.slice(whole);
    const quantum = text.slice(0, whole);
    if (quantum.length === 0) return;
    const bytes = closed ? decodeCanonicalBase64(quantum) : quantum.includes("=") ? null : Buffer.from(quantum, "base64");
    if (bytes === null || (!closed && bytes.length !== (quantum.length / 4) * 3)) bad = true;
    else out(bytes);
  });
  return closed && !bad && length > 0 ? length : null;
}

/**
 * Whether the payload's bytes are one whole string in an image slot of the `expected` kind: the
 * line parsed with the placeholder there, then with the probe there, has exactly one such slot
 * holding each, the same slot. (A string of the line may already read as the placeholder through
 * `\u` escapes, while the payload was only part of some other string.)
 */
function payloadSlotIs(text: string, probed: string, expected: PayloadKind): boolean {
  const a = slotsHolding(text, PLACEHOLDER, expected);
  const b = slotsHolding(probed, PROBE, expected);
  return a !== null && b !== null && a.length === 1 && b.length === 1 && a[0] === b[0];
}

/**
 * Where (the index among all image payloads, in visiting order) the payloads of kind `expected`
 * equal to `stand` are; null when the text is no entry.
 */
function slotsHolding(text: string, stand: string, expected: PayloadKind): number[] | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(value) || typeof value.type !== "string") return null;
  const found: number[] = [];
  let index = 0;
  mapImagePayloads(value, (payload, kind) => {
    if (payload === stand && kind === expected) found.push(index);
    index++;
    return payload;
  });
  return found;
}

/** Renames the streamed temp blob into place (an existing blob of that hash is kept). */
function storeBlob(temp: string, path: string, fsync: boolean): void {
  const existing = io.lstatSync(path, { throwIfNoEntry: false });
  if (existing !== undefined && !existing.isSymbolicLink()) {
    discard(temp);
    const now = new Date();
    io.utimesSync(path, now, now);
    return;
  }
  if (existing?.isSymbolicLink()) io.unlinkSync(path);
  io.renameSync(temp, path);
  if (fsync) fsyncDir(dirname(path));
}

function discard(temp: string): null {
  try {
    io.unlinkSync(temp);
  } catch (err) {
    if (errnoCode(err) !== "ENOENT") throw err;
  }
  return null;
}
