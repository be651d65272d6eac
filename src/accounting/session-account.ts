import { BLOB_REF_PREFIX, isBlobHash } from "../blob/blob-ref.ts";
import { forEachKeyedBlobRef, KEYED_BLOB_REF_PREFIX } from "../blob/keyed-blob-ref.ts";
import { decodeLine, stripBom } from "../format/decode-line.ts";
import type { RawRecord } from "../format/types.ts";
import { addByteKinds, classifyRecords, emptyByteKinds, type ByteKinds } from "./line-kinds.ts";
import { followModel, usageRowOf, type ModelState, type UsageProblem, type UsageRow } from "./usage-rows.ts";

/**
 * The version of the rules that turn lines into an account (usage rows above all): a cache of
 * accounts made by other rules is read again. 2: Codex `token_count` rows, `unpriced` rows.
 */
export const ACCOUNTING_RULES = 2;

/** One line as a scanner hands it over (`LineSplitter`'s `ScannedLine` fits). */
export interface AccountedLine {
  /** The line without its `\n` (for an over-long line, a prefix: see `fullLength`). */
  bytes: Buffer;
  /** 1-based. */
  lineNumber: number;
  /** False for a final line without its `\n`. */
  terminated: boolean;
  /** Set for a line too long to hold: its whole length (`bytes` is a prefix). */
  fullLength?: number;
}

/** What one session's lines hold: bytes by kind, the blobs it references, its usage rows. */
export interface SessionAccount {
  sessionId: string | null;
  cwd: string | null;
  /** The header's `timestamp` (when the session was created), as written; null without one. */
  created: string | null;
  /** Bytes seen (the file's size, or the rows' lines each with a newline). Equals the sum of `kinds`. */
  bytes: number;
  lines: number;
  kinds: ByteKinds;
  /** Hashes of the blobs the lines reference (each once); keyed refs by their hex name (the file's name). */
  blobRefs: Set<string>;
  usage: UsageRow[];
  usageProblems: UsageProblem[];
}

const REF_PREFIX = Buffer.from(BLOB_REF_PREFIX);
const KEYED_PREFIX = Buffer.from(KEYED_BLOB_REF_PREFIX);

/**
 * Accounts for a session line by line, as a stream delivers it: memory holds one line and the
 * totals, never the session. Pure (no I/O, no clock): the file scan, the database scan and an
 * index catching up on appended bytes all feed it the same way, and `result()` may be read at any
 * point (a cache keeps an accountant and feeds it only the bytes past its last offset).
 */
export class SessionAccountant {
  private readonly account: SessionAccount;
  private readonly model: ModelState = { provider: null, model: null };

  constructor(known: { sessionId?: string; cwd?: string } = {}) {
    this.account = {
      sessionId: known.sessionId ?? null,
      cwd: known.cwd ?? null,
      created: null,
      bytes: 0,
      lines: 0,
      kinds: emptyByteKinds(),
      blobRefs: new Set(),
      usage: [],
      usageProblems: [],
    };
  }

  /** Accounts for one more line. */
  addLine(line: AccountedLine): void {
    const a = this.account;
    const lineBytes = (line.fullLength ?? line.bytes.length) + (line.terminated ? 1 : 0);
    a.bytes += lineBytes;
    a.lines++;
    for (let at = line.bytes.indexOf(REF_PREFIX); at !== -1; at = line.bytes.indexOf(REF_PREFIX, at + 1)) {
      const hash = line.bytes.toString("latin1", at + REF_PREFIX.length, at + REF_PREFIX.length + 64);
      if (isBlobHash(hash)) a.blobRefs.add(hash);
    }
    // An encrypted line lists its keyed refs in clear.
    if (line.bytes.includes(KEYED_PREFIX)) forEachKeyedBlobRef(line.bytes, (hex) => a.blobRefs.add(hex));
    if (line.fullLength !== undefined) {
      a.kinds.oversized += lineBytes;
      return;
    }
    const decoded = decodeLine(line.lineNumber === 1 ? stripBom(line.bytes) : line.bytes);
    const records: RawRecord[] | null =
      decoded.kind === "record" ? [decoded.value] : decoded.kind === "glued" ? decoded.values : decoded.kind === "blank" ? [] : null;
    addByteKinds(a.kinds, classifyRecords(records, lineBytes));
    for (const record of records ?? []) this.follow(record, line.lineNumber);
  }

  private follow(record: RawRecord, line: number): void {
    const a = this.account;
    if (record.type === "session") {
      if (a.sessionId === null && typeof record.id === "string") a.sessionId = record.id;
      if (a.cwd === null && typeof record.cwd === "string") a.cwd = record.cwd;
      if (a.created === null && typeof record.timestamp === "string") a.created = record.timestamp;
    }
    followModel(this.model, record);
    const { row, problems } = usageRowOf(record, { sessionId: a.sessionId ?? "", cwd: a.cwd ?? "", line, model: this.model });
    if (row !== null) a.usage.push(row);
    a.usageProblems.push(...problems);
  }

  /** The account so far (live: keeps growing with later lines). */
  result(): SessionAccount {
    return this.account;
  }

  /**
   * Everything the accountant knows, as plain JSON (blob refs as an array): what a cache stores
   * beside the byte offset it has read to, so that catching up feeds only the lines past it.
   */
  state(): AccountantState {
    const { blobRefs, ...rest } = this.account;
    return structuredClone({ account: { ...rest, blobRefs: [...blobRefs] }, model: this.model });
  }

  /** An accountant that goes on from a `state()` (the next line fed is the one after it). */
  static resume(state: AccountantState): SessionAccountant {
    const accountant = new SessionAccountant();
    const copy = structuredClone(state);
    Object.assign(accountant.account, { ...copy.account, blobRefs: new Set(copy.account.blobRefs) });
    Object.assign(accountant.model, copy.model);
    return accountant;
  }
}

/** A `SessionAccountant`'s state as plain JSON. */
export interface AccountantState {
  account: Omit<SessionAccount, "blobRefs"> & { blobRefs: string[] };
  model: ModelState;
}
