import { TranscriptStoreError } from "../errors.ts";
import { type DecodedLine, decodeLine, stripBom } from "./decode-line.ts";
import type { MalformedLine } from "./load-report.ts";
import type { ScannedLine } from "./line-splitter.ts";
import { FOREIGN_PROBE_RECORDS, type ForeignFormat, foreignFormatHint, foreignFormatOf } from "./foreign-format.ts";
import { CURRENT_VERSION, type RawRecord, type SessionHeader } from "./types.ts";

/** An entry record with its position: `lineIndex` counts lines from the header (header = 0). */
export interface PositionedRecord {
  record: RawRecord;
  lineIndex: number;
}

/** The fragment of an unterminated final line that did not parse. */
export interface TornTail {
  offset: number;
  bytes: Buffer;
}

/** Everything a scan of a session file found, before migration. */
export interface ParsedSession {
  header: SessionHeader | null;
  /** Why the header is unusable, when it is; the file must then never be overwritten. */
  headerProblem: string | null;
  records: PositionedRecord[];
  malformed: MalformedLine[];
  /**
   * Lines that held several records glued together (a lost newline): their records were read;
   * the original bytes are kept here so a rewrite can move them to quarantine.
   */
  repaired: MalformedLine[];
  tornTail: TornTail | null;
  /** The last line parsed but had no `\n`: append one before writing more. */
  missingFinalNewline: boolean;
  /** Byte length up to and including the last complete line. */
  completeLength: number;
  linesRead: number;
  nulRuns: number;
  bytesRead: number;
}

export interface SessionParserOptions {
  /**
   * Transforms each entry record as it is read, given the line's JSON text so cheap substring
   * checks can skip records that need nothing (loads rehydrate or externalize images here), and
   * the line's byte offset and length in the file.
   */
  mapRecord?: (record: RawRecord, text: string, lineIndex: number, offset: number, byteLength: number, cut: boolean) => RawRecord;
  /**
   * Looks at a line's bytes before they are parsed: may return shorter bytes to parse instead (large
   * payloads cut out) and how to turn the record parsed from them into the line's record (null when
   * it cannot; the line itself is then parsed). `mapRecord` is then given the shorter text and `cut`.
   */
  cutLine?: (bytes: Buffer) => LineCut | null;
  /**
   * Turns each entry line's record into the record it stands for, before anything else looks at it
   * (an encrypted session's lines are decrypted here), given the header and the line's ordinal among
   * the entry records (1-based). May throw: the scan stops.
   */
  openRecord?: (record: RawRecord, header: SessionHeader, ordinal: number) => RawRecord;
}

/** A line's bytes with parts cut out, and how the record parsed from them is made whole again. */
export interface LineCut {
  bytes: Buffer;
  restore(record: RawRecord): RawRecord | null;
}

function isTitleLine(value: RawRecord): boolean {
  return value.type === "title";
}

/** The one problem reported for a pretty-printed file (it is never rewritten). */
export const PRETTY_PRINTED_PROBLEM =
  "the file is pretty-printed JSON (each object spread over many lines), not JSONL with one object per line; " +
  "it is left untouched (reformat it with one object per line, e.g. `jq -c .`)";

/** The longest line that can be a pretty-printed fragment (`{`, `},` with indentation...). */
export const PRETTY_FRAGMENT_MAX_BYTES = 8;

/** A line that only opens (`{`, `[`) or closes (`}`, `},`, `]`) a pretty-printed value. */
function prettyFragment(bytes: Buffer): "open" | "close" | null {
  if (bytes.length > PRETTY_FRAGMENT_MAX_BYTES) return null;
  const text = bytes.toString("latin1").trim();
  if (text === "{" || text === "[") return "open";
  if (text === "}" || text === "}," || text === "]" || text === "],") return "close";
  return null;
}

/**
 * Turns scanned lines into a header, entry records and a list of problems. Pure: it never touches
 * the disk, and every problem (malformed line, torn tail, duplicate id) and repair (records glued on
 * one line) is returned as a value with the raw bytes needed to preserve it.
 */
export class SessionParser {
  private header: SessionHeader | null = null;
  private headerProblem: string | null = null;
  /** Records of a file whose first record is not a header, still to be looked at for another agent's format. */
  private foreignProbe = 0;
  private foreign: ForeignFormat | null = null;
  private title: string | undefined;
  private parsedCount = 0;
  private records: PositionedRecord[] = [];
  private malformed: MalformedLine[] = [];
  private repaired: MalformedLine[] = [];
  private prettyOpens = 0;
  private prettyCloses = 0;
  private tornTail: TornTail | null = null;
  private missingFinalNewline = false;
  private completeLength = 0;
  private linesRead = 0;
  private nulRuns = 0;
  private bytesRead = 0;
  private readonly ids = new Set<string>();

  constructor(private readonly options: SessionParserOptions = {}) {}

  line(scanned: ScannedLine): void {
    this.linesRead++;
    const end = scanned.offset + scanned.bytes.length + (scanned.terminated ? 1 : 0);
    this.bytesRead = end;
    const bytes = scanned.lineNumber === 1 ? stripBom(scanned.bytes) : scanned.bytes;
    const decoded = this.decode(bytes);
    if (decoded.nulBytes > 0) this.nulRuns++;

    if (!scanned.terminated) {
      if (decoded.kind === "malformed" || (decoded.kind === "blank" && decoded.nulBytes > 0)) {
        this.tornTail = { offset: scanned.offset, bytes: Buffer.from(scanned.bytes) };
        if (this.header === null && this.headerProblem === null) this.headerProblem = "header line is incomplete";
        return;
      }
      if (decoded.kind === "record" || decoded.kind === "glued") this.missingFinalNewline = true;
    }
    this.completeLength = end;

    if (decoded.kind === "blank") return;

    if (decoded.kind === "malformed") {
      const fragment = prettyFragment(bytes);
      if (this.header === null && this.headerProblem === null) {
        this.headerProblem = fragment === "open" ? PRETTY_PRINTED_PROBLEM : `header: ${decoded.reason}`;
        return;
      }
      if (this.header === null) return; // lines after a bad header are not interpreted
      if (fragment === "open") this.prettyOpens++;
      else if (fragment === "close") this.prettyCloses++;
      this.malformed.push({ line: scanned.lineNumber, offset: scanned.offset, reason: decoded.reason, bytes: Buffer.from(scanned.bytes) });
      return;
    }
    if (decoded.kind === "record") {
      this.takeObject(decoded.value, decoded.text, scanned, scanned.bytes, decoded.cut === true);
      return;
    }
    const reason = `${decoded.values.length} records glued on one line (a lost newline); read one by one`;
    this.repaired.push({ line: scanned.lineNumber, offset: scanned.offset, reason, bytes: Buffer.from(scanned.bytes) });
    for (let i = 0; i < decoded.values.length; i++) {
      const text = decoded.texts[i]!;
      this.takeObject(decoded.values[i]!, text, scanned, Buffer.from(text));
    }
  }

  /** The line decoded, from its cut bytes when `cutLine` cuts it and the cut record is made whole, else from itself. */
  private decode(bytes: Buffer): DecodedLine & { cut?: boolean } {
    // The header (or title) line is taken as it is: only entry records are ever cut.
    const cut = this.header !== null && this.options.cutLine ? this.options.cutLine(bytes) : null;
    if (cut !== null) {
      const decoded = decodeLine(cut.bytes);
      const whole = decoded.kind === "record" ? cut.restore(decoded.value) : null;
      if (decoded.kind === "record" && whole !== null) return { ...decoded, value: whole, cut: true };
    }
    return decodeLine(bytes);
  }

  /** One object of a line: the header (or omp title) until there is one, then an entry record. */
  private takeObject(stored: RawRecord, text: string, scanned: ScannedLine, bytes: Buffer, cut = false): void {
    if (this.header === null && this.headerProblem === null) {
      this.takeHeader(stored);
      return;
    }
    if (this.header === null) {
      // Lines after a bad header are not interpreted, only looked at to say what the file is.
      if (this.foreignProbe > 0) {
        this.foreignProbe--;
        this.foreign ??= foreignFormatOf(stored);
      }
      return;
    }
    const record = this.options.openRecord ? this.options.openRecord(stored, this.header, this.parsedCount + 1) : this.plain(stored);
    const version = typeof this.header.version === "number" ? this.header.version : 1;
    if (version >= 2) {
      const id = record.id;
      if (typeof id !== "string" || id.length === 0) {
        this.malformed.push({ line: scanned.lineNumber, offset: scanned.offset, reason: "entry has no id", bytes: Buffer.from(bytes) });
        return;
      }
      // v1 and v2 repeats are given fresh ids by migration; a current file's repeat is reported.
      if (version >= CURRENT_VERSION && this.ids.has(id)) {
        this.malformed.push({
          line: scanned.lineNumber,
          offset: scanned.offset,
          reason: `duplicate entry id ${id}`,
          bytes: Buffer.from(bytes),
        });
        return;
      }
      this.ids.add(id);
    }
    // pi counts v1 positions over the parsed objects of the file, the header being 0.
    const lineIndex = ++this.parsedCount;
    const { mapRecord } = this.options;
    const mapped = mapRecord ? mapRecord(record, text, lineIndex, scanned.offset, scanned.bytes.length, cut) : record;
    this.records.push({ record: mapped, lineIndex });
  }

  /**
   * An entry record read without `openRecord`: an encrypted session's lines are never handed on as
   * records (a reader that cannot decrypt must not rewrite or count them): `KEY_REQUIRED`.
   */
  private plain(record: RawRecord): RawRecord {
    if (this.header !== null && this.header.encryption !== undefined) {
      throw new TranscriptStoreError(
        "KEY_REQUIRED",
        `Session ${this.header.id} is encrypted; this reader does not decrypt it, nothing is read`,
      );
    }
    return record;
  }

  private takeHeader(value: RawRecord): void {
    if (isTitleLine(value) && this.title === undefined) {
      // omp reserves a fixed-width first line for the title; the real header follows.
      this.title = typeof value.title === "string" ? value.title.trimEnd() : "";
      return;
    }
    if (value.type !== "session" || typeof value.id !== "string" || value.id.length === 0) {
      this.headerProblem = `first line is not a session header (type ${JSON.stringify(value.type)})`;
      this.foreign = foreignFormatOf(value);
      this.foreignProbe = FOREIGN_PROBE_RECORDS - 1;
      return;
    }
    const header = { ...value } as SessionHeader;
    if (typeof header.cwd !== "string") header.cwd = "";
    if (typeof header.timestamp !== "string") header.timestamp = "";
    if (this.title !== undefined && this.title.length > 0 && header.title === undefined) header.title = this.title;
    this.header = header;
  }

  finish(): ParsedSession {
    if (this.header === null && this.foreign !== null) {
      this.headerProblem = `${this.headerProblem}: ${foreignFormatHint(this.foreign)}`;
      this.foreign = null;
      this.foreignProbe = 0;
    }
    if (this.header === null && this.headerProblem === null && this.title !== undefined) {
      this.headerProblem = "title line without a session header";
    }
    if (this.header !== null && this.prettyOpens > 0 && this.prettyCloses > 0 && this.malformed.length > this.records.length) {
      // Mostly fragments of pretty-printed objects: one clear problem, not hundreds of bad lines.
      this.header = null;
      this.headerProblem = PRETTY_PRINTED_PROBLEM;
    }
    return {
      header: this.header,
      headerProblem: this.headerProblem,
      records: this.records,
      malformed: this.malformed,
      repaired: this.repaired,
      tornTail: this.tornTail,
      missingFinalNewline: this.missingFinalNewline,
      completeLength: this.completeLength,
      linesRead: this.linesRead,
      nulRuns: this.nulRuns,
      bytesRead: this.bytesRead,
    };
  }
}

/** The reason a quarantined torn final fragment is recorded with. */
export const TORN_TAIL_REASON = "torn tail (unterminated final line)";

/**
 * Every line a rewrite of the file must keep in quarantine, in file order: malformed lines, lines
 * of glued records (rewritten one record per line) and a torn final fragment.
 */
export function linesToQuarantine(parsed: ParsedSession): MalformedLine[] {
  const lines = [...parsed.malformed, ...parsed.repaired];
  const torn = parsed.tornTail;
  if (torn !== null) lines.push({ line: parsed.linesRead, offset: torn.offset, reason: TORN_TAIL_REASON, bytes: torn.bytes });
  return lines;
}

/** Parses a whole in-memory buffer (tests, small inputs). Loading files goes through the chunked reader. */
export function parseSessionBytes(bytes: Buffer, options?: SessionParserOptions): ParsedSession {
  const parser = new SessionParser(options);
  let offset = 0;
  let lineNumber = 0;
  while (offset < bytes.length) {
    const nl = bytes.indexOf(0x0a, offset);
    const terminated = nl !== -1;
    const endIdx = terminated ? nl : bytes.length;
    parser.line({ bytes: bytes.subarray(offset, endIdx), offset, lineNumber: ++lineNumber, terminated });
    offset = endIdx + 1;
  }
  return parser.finish();
}
