import type { BlobStore } from "../blob/blob-store.ts";
import { prepareLineWarned } from "../prepare/prepare-warned.ts";
import { BLOB_REF_PREFIX, forEachBlobRef } from "../blob/blob-ref.ts";
import { TranscriptStoreError, type StoreWarning } from "../errors.ts";
import { isRecord, type SessionEntry, type SessionHeader } from "../format/types.ts";
import { linesToQuarantine } from "../format/session-parser.ts";
import type { PreparedLine, ResolvedPrepareOptions } from "../prepare/pipeline.ts";
import { KeyedBlobs } from "../blob/keyed-blobs.ts";
import { keyedBlobCipherOf, sealLine, toKeyedEntry, type KeyedWrite } from "../crypto/keyed-lines.ts";
import { cipherFor, type LineCipher, type StoreKey } from "../crypto/line-cipher.ts";
import type { SessionFile } from "./session-file.ts";
import type { LoadedSession } from "./session-loader.ts";
import type { RehydrateMode } from "./rehydrate.ts";

/** Longest line (in worst-case UTF-8 bytes) encoded into the reused buffer; longer ones get their own. */
const SCRATCH_LIMIT = 4 * 1024 * 1024;

export interface SessionWriterOptions {
  prepare: ResolvedPrepareOptions;
  rehydrate: RehydrateMode;
  /**
   * Bytes of a blob an entry already refers to (a lazy open's ref to an image still inline in a
   * session file) when the store lacks it: stored before any line referencing it is written.
   */
  missingBlob: (hash: string) => Buffer | null;
  /** Called before the first blob of a line is stored: registers the session with the blob store. */
  register: () => void;
  /** A whole-file rewrite from entries landed (the file now refers to stored blobs only). */
  rewritten: () => void;
  warn: (warning: StoreWarning) => void;
  /** The store key: a session whose header is encrypted has its entry lines encrypted with it. */
  key?: StoreKey | null;
  /** Entry lines the file already holds (an opened file's), for an encrypted line's ordinal. @default 0 */
  entryLines?: number;
}

/**
 * Memory every writer encodes its line into before appending it (see `SessionWriter.encode`): one
 * for the process, not one per session (a process may hold thousands of writable sessions). An
 * append uses it synchronously and `SessionFile.append` keeps nothing of it.
 */
let encoded: Buffer = Buffer.allocUnsafe(0);

/**
 * Turns entries into lines on disk for one session: runs the prepare pipeline, stores the blobs a
 * line references before the line, keeps pi's deferred mode (no file before the first assistant
 * message), and upgrades or repairs a file before its first append. The bytes themselves belong to
 * `SessionFile`.
 */
export class SessionWriter {
  /** Entries kept back by `deferUntilAssistant` until the first assistant message. */
  private readonly deferred: SessionEntry[] = [];
  /** Entry lines in the file: the next one's ordinal is this plus one (bound into an encrypted line). */
  private entryLines: number;
  /** The session's line cipher (undefined until first needed; null: a plain session). */
  private cipher: LineCipher | null | undefined;
  /** An encrypted session's keyed blobs (created with its cipher). */
  private keyed: KeyedBlobs | null = null;
  /** The keyed blobs the line being prepared references (an encrypted session's images). */
  private keyedWrites: KeyedWrite[] = [];

  constructor(
    readonly file: SessionFile,
    private readonly blobs: BlobStore,
    private readonly options: SessionWriterOptions,
    private readonly header: () => SessionHeader,
    private headerWritten: boolean,
  ) {
    this.entryLines = options.entryLines ?? 0;
  }

  /** True once the file holds at least its header. */
  get hasHeader(): boolean {
    return this.headerWritten;
  }

  /**
   * Persists one entry (or defers it) and returns what memory keeps: the entry as given, or in lazy
   * mode its prepared form with blob refs. Throws `PERSISTENCE_FAILED` with nothing written.
   */
  persist(entry: SessionEntry): SessionEntry {
    if (!this.headerWritten) {
      this.deferred.push(entry);
      const isAssistant = entry.type === "message" && isRecord(entry.message) && entry.message.role === "assistant";
      if (!isAssistant) return entry;
      try {
        this.writeWhole(this.deferred);
      } catch (err) {
        this.deferred.pop();
        throw err;
      }
      this.deferred.length = 0;
      return entry;
    }
    const { line, entry: prepared, blobs } = this.prepare(entry);
    this.file.append(this.encode(this.seal(line, this.entryLines + 1)));
    this.entryLines++;
    // A concurrent gc (with a short grace period) may have collected a blob that existed before
    // this line referenced it: put it back before the append is acknowledged.
    for (const blob of blobs) if (!this.blobs.hasSync(blob.hash)) this.blobs.putHashedSync(blob.hash, blob.bytes);
    for (const blob of this.takeKeyedWrites()) if (!this.blobs.hasSync(blob.hex)) this.keyed!.ensureSync(blob.hex, blob.bytes);
    return this.options.rehydrate === "lazy" ? prepared : entry;
  }

  /**
   * `line` and its `\n` as UTF-8, in memory reused from line to line and shared by every writer
   * (valid until the next call of any writer):
   * a line costs one encoding, not a fresh buffer each. A rare huge line gets its own buffer.
   */
  private encode(line: string): Buffer {
    const max = line.length * 3 + 1;
    if (max > SCRATCH_LIMIT) return Buffer.from(`${line}\n`);
    if (encoded.length < max) encoded = Buffer.allocUnsafe(Math.max(max, encoded.length * 2));
    // Offset 0 and UTF-8 are the defaults: this form goes straight to the native encoder.
    const n = encoded.write(line);
    encoded[n] = 0x0a;
    return encoded.subarray(0, n + 1);
  }

  /** Appends the header line to a new, empty file. */
  writeHeader(): void {
    this.file.append(this.headerLine());
    this.headerWritten = true;
  }

  /** Writes header + entries as a fresh file (atomic replace). */
  writeWhole(entries: readonly SessionEntry[]): void {
    let ordinal = 0;
    this.file.rewrite((emit) => {
      emit(this.headerLine());
      for (const entry of entries) emit(Buffer.from(`${this.seal(this.prepare(entry).line, ++ordinal)}\n`));
    });
    this.entryLines = ordinal;
    this.headerWritten = true;
    this.options.rewritten();
  }

  /** Writes the header followed by the bytes `body` emits (whole lines) as a fresh file (atomic replace). */
  writeHeaderAndBody(body: (emit: (data: Buffer) => void) => void): void {
    // Copied lines are bound to their session: an encrypted session's fork writes its entries instead.
    if (this.lineCipher() !== null) throw new TranscriptStoreError("PERSISTENCE_FAILED", "An encrypted session's lines cannot be copied");
    this.file.rewrite((emit) => {
      emit(this.headerLine());
      body(emit);
    });
    this.headerWritten = true;
    this.options.rewritten();
  }

  /** Before the first write: quarantine what cannot be kept, repair the tail, upgrade legacy files. */
  repairOnOpen(loaded: LoadedSession, entries: readonly SessionEntry[], warn: (w: StoreWarning) => void): void {
    const { parsed } = loaded;
    if (loaded.report.migratedFrom !== null) {
      // A line of glued records is rewritten as one line per record; its original bytes are kept.
      this.file.quarantine(linesToQuarantine(parsed));
      this.writeWhole(entries);
      return;
    }
    if (this.file.repairTail(parsed)) {
      warn({
        code: "TORN_TAIL_REPAIRED",
        message:
          parsed.tornTail !== null
            ? `Torn final line (${parsed.tornTail.bytes.length} bytes) moved to quarantine`
            : "Final line was missing its newline",
      });
    }
  }

  /** The line as written: encrypted (bound to the session and `ordinal`) when the session is. */
  private seal(line: string, ordinal: number): string {
    const cipher = this.lineCipher();
    return cipher === null ? line : sealLine(cipher, line, ordinal);
  }

  private takeKeyedWrites(): KeyedWrite[] {
    const writes = this.keyedWrites;
    if (writes.length > 0) this.keyedWrites = [];
    return writes;
  }

  private lineCipher(): LineCipher | null {
    if (this.cipher === undefined) {
      this.cipher = cipherFor(this.header(), this.options.key ?? null);
      if (this.cipher !== null) this.keyed = new KeyedBlobs(this.blobs, keyedBlobCipherOf(this.options.key!));
    }
    return this.cipher;
  }

  private headerLine(): Buffer {
    return Buffer.from(`${JSON.stringify(this.header())}\n`);
  }

  private prepare(entry: SessionEntry): PreparedLine {
    const prepared = prepareLineWarned(entry, this.options.prepare, this.options.warn);
    // The common text line is known to name no blob: no search of its text.
    if (!prepared.mayHoldRefs || !prepared.line.includes(BLOB_REF_PREFIX)) return prepared;
    // The store learns where this session lives before anything of it can reference a blob.
    this.options.register();
    if (this.lineCipher() !== null) return this.keyedLine(prepared);
    // Order invariant: every referenced blob is in place before the line that references it.
    for (const blob of prepared.blobs) this.blobs.putHashedSync(blob.hash, blob.bytes);
    this.storeReferencedBlobs(prepared);
    return prepared;
  }

  /**
   * An encrypted session's line: its images go to keyed blobs (stored before the line, like plain
   * ones), never to the store in clear; the refs the entry carried are made keyed too when their
   * bytes are at hand.
   */
  private keyedLine(prepared: PreparedLine): PreparedLine {
    const own = new Map(prepared.blobs.map((b) => [b.hash, b.bytes] as const));
    const bytesOf = (hash: string): Uint8Array | null => {
      const mine = own.get(hash);
      if (mine !== undefined) return mine;
      try {
        return this.blobs.getVerifiedSync(hash) ?? this.options.missingBlob(hash);
      } catch {
        return this.options.missingBlob(hash); // a corrupt stored copy: only the source's bytes will do
      }
    };
    const { entry, written } = toKeyedEntry(prepared.entry, this.keyed!, bytesOf, this.options.warn);
    this.keyedWrites = written;
    return { ...prepared, entry, blobs: [], line: entry === prepared.entry ? prepared.line : JSON.stringify(entry) };
  }

  /**
   * Refs the entry already carried (not produced by this line's own externalization) must name
   * stored blobs too: missing ones are stored from where memory got them, before the line.
   */
  private storeReferencedBlobs(prepared: PreparedLine): void {
    const own = new Set(prepared.blobs.map((b) => b.hash));
    forEachBlobRef(prepared.line, (hash) => {
      if (own.has(hash) || this.blobs.hasSync(hash)) return;
      own.add(hash);
      const bytes = this.options.missingBlob(hash);
      if (bytes !== null) this.blobs.putHashedSync(hash, bytes);
      else this.options.warn({ code: "BLOB_MISSING", message: `Writing a ref to blob ${hash}, which is missing and not found inline` });
    });
  }
}
