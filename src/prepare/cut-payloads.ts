import { toBlobRef, blobHashOf } from "../blob/blob-ref.ts";
import { decodeCanonicalBase64, decodeWithoutWhitespace } from "./externalize-images.ts";
import { payloadKindAt } from "./image-shapes.ts";
import { DESCEND, mapTree, type SlotContext } from "./map-tree.ts";

/**
 * Cutting large image payloads out of a line's bytes before it is parsed, so that a lazy load
 * keeps no JS string of them (only a short-lived latin1 copy goes to the base64 decoder) and
 * JSON.parse never scans them: each payload is replaced by a
 * short placeholder string, the shortened line is parsed, and the placeholders are then put back
 * as blob refs (at image slots) or as the original strings (anywhere else). Whatever is unusual
 * (escapes, whitespace, a payload that does not decode, a placeholder met more or fewer times than
 * it was cut) is not cut or makes `restoreCuts` give up: the caller then parses the line itself.
 * Correctness rests on the parsed structure, not on the byte patterns that find the candidates.
 */

/** Lines shorter than this are parsed as they are (cutting pays off for large payloads only). */
export const CUT_MIN_LINE_BYTES = 64 * 1024;
/** Shortest payload cut out of a line (and never below the blob threshold). */
export const CUT_MIN_PAYLOAD_BYTES = 16 * 1024;

/** What the cutter did, for tests (work counts, never durations). Internal. */
export const cutCounters = { linesCut: 0, payloadsCut: 0, restoresRefused: 0 };

interface Cut {
  start: number;
  end: number;
  /** `base64`: the decoded bytes are the blob; `dataUrl`: the URL's bytes are. */
  kind: "base64" | "dataUrl";
  /** sha256 of the blob bytes. */
  hash: string;
}

/** Payloads up to this size are decoded into one reused buffer (larger ones get their own). */
const SCRATCH_BYTES = 4 << 20;
let scratch: Buffer | null = null;

/** The reused decode buffer for a base64 text of `chars` characters, or undefined when it would not fit. */
function scratchFor(chars: number): Buffer | undefined {
  if (chars > (SCRATCH_BYTES / 3) * 4) return undefined;
  scratch ??= Buffer.allocUnsafe(SCRATCH_BYTES);
  return scratch;
}

/** A line with its large payloads cut out. */
export interface PayloadCuts {
  /** The line's bytes with each payload replaced by a placeholder string. */
  bytes: Buffer;
  source: Buffer;
  cuts: Cut[];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const DATA = Buffer.from('"data');
const DATA_URL_HEAD = Buffer.from("data:image/");
/**
 * `"\u0000ts-cut:` + index. JSON can put a NUL in a string only by the escape `\u0000`, so in a
 * line without that escape every string that reads as a placeholder is one the cut wrote, and
 * one met exactly once stands alone where its payload was (see `cutImagePayloads`).
 */
const PLACEHOLDER_HEAD = "\u0000ts-cut:";
const NUL_ESCAPE = Buffer.from("\\u0000");

function placeholderJson(index: number): Buffer {
  return Buffer.from(`"\\u0000ts-cut:${index}"`);
}

/**
 * The line with its large `"data": "<base64>"` values and `"data:image/…;base64,…"` strings cut
 * out, or null when it has none worth cutting.
 */
export function cutImagePayloads(line: Buffer, threshold: number): PayloadCuts | null {
  if (line.length < CUT_MIN_LINE_BYTES) return null;
  const minPayload = Math.max(threshold, CUT_MIN_PAYLOAD_BYTES);
  const cuts: Cut[] = [];
  for (let at = line.indexOf(DATA); at !== -1; ) {
    const open = valueOpening(line, at + DATA.length);
    if (open === -1) {
      at = line.indexOf(DATA, at + 1);
      continue;
    }
    const start = open + 1;
    const end = line.indexOf(QUOTE, start);
    if (end === -1) break;
    const dataUrl = open === at;
    // A cut string's bytes must be its value: no escape in it (nor a quote it escapes).
    if (end - start >= minPayload && !hasBackslash(line, start, end)) {
      const cut = dataUrl ? dataUrlCut(line, start, end) : base64Cut(line, start, end);
      if (cut !== null) cuts.push(cut);
    }
    at = line.indexOf(DATA, end + 1);
  }
  if (cuts.length === 0) return null;
  const parts: Buffer[] = [];
  let from = 0;
  for (const [i, cut] of cuts.entries()) {
    parts.push(line.subarray(from, cut.start - 1), placeholderJson(i));
    from = cut.end + 1;
  }
  parts.push(line.subarray(from));
  // A string of the line may already read as a placeholder: restoring could not tell it from one.
  // Only what stays is searched: a cut payload holds no backslash, so no escape either.
  for (let i = 0; i < parts.length; i += 2) if (parts[i]!.includes(NUL_ESCAPE)) return null;
  cutCounters.linesCut++;
  cutCounters.payloadsCut += cuts.length;
  return { bytes: Buffer.concat(parts), source: line, cuts };
}

/**
 * Where the string that may hold a payload opens, given the position just after `"data`: the
 * quote after `":` (a `data` key), the quote of `"data` itself for a `data:image/` string, or -1.
 */
function valueOpening(line: Buffer, i: number): number {
  if (line[i] === 0x3a && line.subarray(i - 4, i + DATA_URL_HEAD.length - 4).equals(DATA_URL_HEAD)) return i - DATA.length;
  if (line[i] !== QUOTE) return -1;
  let j = i + 1;
  while (line[j] === 0x20) j++;
  if (line[j] !== 0x3a) return -1;
  j++;
  while (line[j] === 0x20) j++;
  return line[j] === QUOTE ? j : -1;
}

function hasBackslash(line: Buffer, start: number, end: number): boolean {
  const backslash = line.indexOf(BACKSLASH, start);
  return backslash !== -1 && backslash < end;
}

/** A base64 payload between `start` and `end` (no escape), when it decodes as the load would decode it and holds no control byte. */
function base64Cut(line: Buffer, start: number, end: number): Cut | null {
  const text = line.toString("latin1", start, end);
  // The decoded bytes are hashed at once, so they can live in a reused buffer.
  const into = scratchFor(text.length);
  let decoded = decodeCanonicalBase64(text, into);
  if (decoded === null) {
    // Raw tabs or line breaks make the line invalid JSON: the parse of the line itself says so.
    if (/[\t\r\n]/.test(text)) return null;
    decoded = decodeWithoutWhitespace(text, into); // not decoded twice: the canonical try failed
  }
  return decoded === null ? null : { start, end, kind: "base64", hash: blobHashOf(decoded) };
}

/** A `data:image/<type>;base64,<base64>` URL (no escape) whose base64 part is canonical (so every byte is plain ASCII). */
function dataUrlCut(line: Buffer, start: number, end: number): Cut | null {
  const comma = line.indexOf(0x2c, start);
  if (comma === -1 || comma >= end || comma - start > 256) return null;
  const head = line.toString("latin1", start, comma);
  if (!/^data:image\/[\x21-\x2b\x2d-\x7e]*;base64$/.test(head)) return null;
  const into = scratchFor(end - comma - 1);
  if (decodeCanonicalBase64(line.toString("latin1", comma + 1, end), into) === null) return null;
  return { start, end, kind: "dataUrl", hash: blobHashOf(line.subarray(start, end)) };
}

/** A record parsed from the cut line, put back together. */
export interface RestoredRecord<T> {
  value: T;
  /** The blob hash of each payload now held as a ref (in memory only; the line still holds the payload). */
  hashes: string[];
}

/**
 * `record` (parsed from `cuts.bytes`) with each placeholder replaced: by the blob ref of its
 * payload where the payload sits in an image slot of its kind, else by the original string.
 * Null when the placeholders are not each met exactly once (the line must then be parsed whole).
 */
export function restoreCuts<T>(record: T, cuts: PayloadCuts): RestoredRecord<T> | null {
  const met = new Uint8Array(cuts.cuts.length);
  const hashes: string[] = [];
  let refused = false;
  const value = mapTree(record, {
    visit: (child, key, parent, where) => {
      if (typeof child !== "string") return refused ? child : DESCEND;
      if (!child.startsWith(PLACEHOLDER_HEAD)) return child;
      const index = Number(child.slice(PLACEHOLDER_HEAD.length));
      const cut = Number.isInteger(index) ? cuts.cuts[index] : undefined;
      if (cut === undefined || met[index] === 1 || `${PLACEHOLDER_HEAD}${index}` !== child) {
        refused = true;
        return child;
      }
      met[index] = 1;
      if (parent !== null && key !== null && slotKind(parent, key, where, cut) === cut.kind) {
        hashes.push(cut.hash);
        return toBlobRef(cut.hash);
      }
      return cuts.source.toString("latin1", cut.start, cut.end);
    },
  });
  if (refused || met.includes(0)) {
    cutCounters.restoresRefused++;
    return null;
  }
  return { value, hashes };
}

/** The payload kind the slot gives the cut's original string (the placeholder stands in for it). */
function slotKind(parent: Record<string, unknown>, key: string, where: SlotContext, cut: Cut): string | null {
  // A data URL counts only under `image_url` (the string itself, or its `url`), as payloadKindAt says for it.
  if (cut.kind === "dataUrl") return key === "image_url" || (key === "url" && where.key === "image_url") ? "dataUrl" : null;
  return payloadKindAt(parent, key, where);
}
