import { join } from "node:path";
import { TranscriptStoreError, type StoreWarning, type WarningHandler } from "../errors.ts";
import { io, isTempFileName, removeQuietly, writeFileAtomic } from "../io.ts";
import { writeNew } from "../io-exclusive.ts";
import { AgentOutputs, type AgentOutputRef, type AllocateAgentOutputOptions } from "./agent-outputs.ts";
import type { ArtifactCipher } from "./artifact-cipher.ts";
import { listEntries } from "./artifact-files.ts";
import { redactLabels } from "./artifact-labels.ts";
import { IdLedger } from "./artifact-ids.ts";
import { ArtifactIndex, SUMMARY_HEAD_BYTES, type Found } from "./artifact-index.ts";
import { isArtifactId, logFileName, metaFileName, parseArtifactId, sanitizeToolType } from "./artifact-names.ts";
import { bytesToText, decodeValue, serializeValue, type SerializedValue } from "./artifact-values.ts";
import { ArtifactWriter } from "./artifact-writer.ts";
import { validatePageOptions, type LinePage, type LinePageOptions } from "./line-pages.ts";
import { defaultContentType, encodeMeta, isExpired, logNameOf, summarize, type ArtifactMeta, type ArtifactRef } from "./metadata.ts";
import { spillValue, type SpillOptions, type SpillResult } from "./pointer.ts";
import { validateSaveOptions, type SaveOptions, type WriterOptions } from "./save-options.ts";

import type { RedactionCounts, SecretRedactor } from "../prepare/redact-secrets.ts";

export type { SaveOptions, WriterOptions } from "./save-options.ts";

/** Options of `new ArtifactStore(dir, options)`. */
export interface ArtifactStoreOptions {
  /** Clock in epoch milliseconds, for `createdAt` and expiry. @default Date.now */
  now?: () => number;
  /** Receives non-fatal problems (a symlink planted in the directory, unreadable metadata). */
  onWarning?: WarningHandler;
  /** fsync each finished file and the directory (survives power loss). @default false */
  fsync?: boolean;
  /**
   * Redacts secrets in what is written (text and JSON artifacts, streamed artifacts when finished,
   * agent outputs), each reported as `SECRET_REDACTED`; byte artifacts are stored as given. @default none
   */
  redactor?: SecretRedactor | null;
  /**
   * An encrypted session's: every content file and agent output is sealed with it (docs/format.md,
   * Encrypted artifacts), metadata carries no summary, streams are kept in memory until `finish()`,
   * and `allocate` (a file written by someone else, in clear) is refused. @default none
   */
  cipher?: ArtifactCipher | null;
}

/** An id reserved for a writer that produces the content file itself (`allocate`). */
export interface AllocatedArtifact {
  id: string;
  uri: string;
  /** Where the content belongs; write a temp file beside it and rename it here. */
  path: string;
  toolType: string;
}

/** What `stats()` returns: the live artifacts only, as `list()` sees them. */
export interface ArtifactStats {
  artifactCount: number;
  totalBytes: number;
}

/** Age after which a temp file in the directory is taken for a crash leftover. */
const TEMP_GRACE_MS = 60 * 60 * 1000;

/**
 * The artifacts of one session: `<id>.<toolType>.log` content files with `<id>.meta.json`
 * metadata beside them, plus `<id>.md` agent outputs, all in one private directory that is
 * created on the first write. Every read goes to the directory, so several processes (or a
 * parent and its subagents) can share one; ids are claimed with an exclusive create.
 */
export class ArtifactStore {
  readonly dir: string;
  private readonly now: () => number;
  private readonly onWarning: WarningHandler | undefined;
  /** @internal */
  readonly fsync: boolean;
  private readonly index: ArtifactIndex;
  private readonly ids: IdLedger;
  private readonly agentOutputs: AgentOutputs;
  /** @internal */
  readonly redactor: SecretRedactor | null;
  /** @internal */
  readonly cipher: ArtifactCipher | null;

  constructor(dir: string, options: ArtifactStoreOptions = {}) {
    if (typeof dir !== "string" || dir.length === 0)
      throw new TranscriptStoreError("INVALID_OPTION", "ArtifactStore needs a directory path");
    if (options.now !== undefined && typeof options.now !== "function")
      throw new TranscriptStoreError("INVALID_OPTION", "now must be a function returning epoch milliseconds");
    if (options.onWarning !== undefined && typeof options.onWarning !== "function")
      throw new TranscriptStoreError("INVALID_OPTION", "onWarning must be a function");
    this.dir = dir;
    this.now = options.now ?? Date.now;
    this.onWarning = options.onWarning;
    this.fsync = options.fsync === true;
    this.redactor = options.redactor ?? null;
    this.cipher = options.cipher ?? null;
    this.index = new ArtifactIndex(dir, (w) => this.warn(w), this.cipher);
    this.ids = new IdLedger(dir, this.index, this.fsync);
    this.agentOutputs = new AgentOutputs(this);
  }

  /** Stores content (a string, bytes, or any JSON value) as a new artifact. */
  save(content: unknown, options: SaveOptions): ArtifactRef {
    return this.saveSerialized(serializeValue(content), options);
  }

  /** @internal `save` for a value already serialized (spill measured it; serializing twice would be waste). */
  saveSerialized(given: SerializedValue, options: SaveOptions): ArtifactRef {
    const opts = validateSaveOptions(options);
    const counts: RedactionCounts = new Map();
    const value = this.redactSerialized(given, counts);
    const toolType = sanitizeToolType(opts.toolType);
    for (;;) {
      const id = this.claimId();
      const createdAt = this.now();
      const meta: ArtifactMeta = {
        v: 1,
        id,
        toolType,
        // An encrypted session's summary is read from its sealed content, never kept in clear.
        summary:
          this.cipher !== null
            ? undefined
            : (opts.summary ?? summarize(value.text ?? this.redactedHead(value.bytes.toString("utf8", 0, SUMMARY_HEAD_BYTES), counts))),
        sizeBytes: value.bytes.length,
        createdAt,
        contentType: opts.contentType ?? defaultContentType(value.encoding),
        encoding: value.encoding,
      };
      if (meta.summary === undefined) delete meta.summary;
      if (opts.name !== undefined) meta.name = opts.name;
      if (opts.ttlMs !== undefined) meta.expiresAt = createdAt + opts.ttlMs;
      if (this.redactor !== null) redactLabels(meta, this.redactor, counts);
      let published: boolean;
      try {
        // Metadata first: a reader that sees the content file always finds finished metadata.
        writeFileAtomic(join(this.dir, metaFileName(id)), encodeMeta(meta), { fsync: this.fsync });
        published = writeNew(join(this.dir, logNameOf(meta)), this.sealed(logNameOf(meta), value.bytes), { fsync: this.fsync });
      } catch (err) {
        this.releaseId(id);
        throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not save artifact ${id}: ${(err as Error).message}`, {
          path: join(this.dir, logNameOf(meta)),
          cause: err,
        });
      }
      if (!published) {
        // Something already holds the content name: skip the id and leave it as it was. Another
        // tool's regular file stays readable under its id (with metadata derived from it, as for
        // any file without ours); anything else (a planted symlink) stays unread, behind a tombstone.
        this.ids.skip(id, logNameOf(meta));
        continue;
      }
      this.index.remember(meta);
      this.reportRedacted(`Artifact ${id}`, counts, join(this.dir, logNameOf(meta)));
      return this.toRef(meta, value.bytes.length);
    }
  }

  /** A text or JSON value with its secrets redacted (the same value when none, or without a redactor). */
  private redactSerialized(value: SerializedValue, counts: RedactionCounts): SerializedValue {
    const r = this.redactor;
    if (r === null || value.text === null || !r.mayMatch(value.text)) return value;
    const text =
      value.encoding === "json" ? JSON.stringify(r.redactValue(JSON.parse(value.text), counts)) : r.redactText(value.text, counts);
    return counts.size === 0 ? value : { ...value, text, bytes: Buffer.from(text, "utf8") };
  }

  /** A byte artifact's head read as text for its summary, its secrets redacted first (a summary's cut may split one). */
  private redactedHead(head: string, counts: RedactionCounts): string {
    return this.redactor === null ? head : this.redactor.redactText(head, counts);
  }

  /**
   * @internal Every finished artifact with content (expired ones too) and its content file path:
   * what `redact` scrubs.
   */
  storedArtifacts(): Array<{ meta: ArtifactMeta; path: string }> {
    return this.index
      .scan()
      .filter((f) => f.size !== null)
      .map((f) => ({ meta: f.meta, path: join(this.dir, logNameOf(f.meta)) }));
  }

  /**
   * @internal Replaces an artifact's content (temp + rename), metadata first with the new size and
   * summary: `redact` rewriting what is stored.
   */
  replaceContent(meta: ArtifactMeta, bytes: Buffer, text: string, summaryGiven = false): void {
    const next: ArtifactMeta = { ...meta, sizeBytes: bytes.length };
    if (meta.summary !== undefined && !summaryGiven) next.summary = summarize(text);
    writeFileAtomic(join(this.dir, metaFileName(meta.id)), encodeMeta(next), { fsync: this.fsync });
    writeFileAtomic(join(this.dir, logNameOf(meta)), this.sealed(logNameOf(meta), bytes), { fsync: this.fsync });
  }

  /** @internal Replaces an artifact's metadata (temp + rename): `redact` scrubbing its summary or name. */
  replaceMeta(meta: ArtifactMeta): void {
    writeFileAtomic(join(this.dir, metaFileName(meta.id)), encodeMeta(meta), { fsync: this.fsync });
    this.index.remember(meta);
  }

  /** @internal What a file named `name` holds for `plain`: sealed in an encrypted session, else `plain`. */
  sealed(name: string, plain: Uint8Array): Uint8Array {
    return this.cipher === null ? plain : this.cipher.seal(name, plain);
  }

  /** @internal Reports a write in which secrets were redacted (rules and counts only). */
  reportRedacted(what: string, counts: RedactionCounts, path: string): void {
    if (counts.size === 0) return;
    const found = [...counts].map(([rule, n]) => `${rule}×${n}`).join(", ");
    this.warn({ code: "SECRET_REDACTED", message: `${what}: redacted ${found}`, path });
  }

  /**
   * Reserves an id for a writer that produces the content itself. The artifact exists once a
   * file appears at `path`; its size and summary are then read from the file.
   */
  allocate(toolType: string): AllocatedArtifact {
    if (this.cipher !== null)
      throw new TranscriptStoreError("INVALID_OPTION", "allocate is refused in an encrypted session (its file would be written in clear)");
    const type = sanitizeToolType(toolType);
    const id = this.claimId();
    const meta: ArtifactMeta = {
      v: 1,
      id,
      toolType: type,
      createdAt: this.now(),
      contentType: defaultContentType("text"),
      encoding: "text",
    };
    try {
      writeFileAtomic(join(this.dir, metaFileName(id)), encodeMeta(meta), { fsync: this.fsync });
    } catch (err) {
      this.releaseId(id);
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not allocate artifact ${id}: ${(err as Error).message}`, {
        path: join(this.dir, metaFileName(id)),
        cause: err,
      });
    }
    this.index.remember(meta);
    return { id, uri: `artifact://${id}`, path: join(this.dir, logFileName(id, type)), toolType: type };
  }

  /**
   * Opens a streaming writer: chunks go to a temp file that becomes the artifact on `finish()`,
   * so a crash mid-stream never leaves a partial file under an artifact name.
   */
  createWriter(toolType: string, options: WriterOptions = {}): ArtifactWriter {
    return new ArtifactWriter(this, sanitizeToolType(toolType), options);
  }

  /**
   * The saved value by id, name or `artifact://` URI: a string for text, the original value for
   * JSON (objects come back as objects), a Buffer for bytes; `null` when missing or expired.
   */
  get(idOrNameOrUri: string): unknown {
    const found = this.findLive(idOrNameOrUri);
    if (found === null) return null;
    const bytes = this.index.readContent(found.meta);
    if (bytes === null) return null;
    if (found.meta.encoding === "bytes") return bytes;
    const text = bytesToText(bytes, found.meta.id);
    try {
      return decodeValue(bytes, found.meta.encoding, text);
    } catch (err) {
      this.warn({
        code: "MALFORMED_LINES",
        message: `Artifact ${found.meta.id} is not valid JSON, returned as text: ${(err as Error).message}`,
        path: this.index.logPath(found.meta),
      });
      return text;
    }
  }

  /** The stored content as text (JSON values as their JSON text); `null` when missing or expired. */
  getText(idOrNameOrUri: string): string | null {
    const found = this.findLive(idOrNameOrUri);
    if (found === null) return null;
    const bytes = this.index.readContent(found.meta);
    return bytes === null ? null : bytesToText(bytes, found.meta.id);
  }

  /** The reference without the content; `null` when missing or expired. */
  getRef(idOrNameOrUri: string): ArtifactRef | null {
    const found = this.findLive(idOrNameOrUri);
    return found === null ? null : this.toRef(found.meta, found.size!);
  }

  /** A page of the content's lines (1-based `offset`, `limit` lines); `null` when missing or expired. */
  read(idOrNameOrUri: string, options: LinePageOptions = {}): LinePage | null {
    validatePageOptions(options);
    const found = this.findLive(idOrNameOrUri);
    return found === null ? null : this.index.readPage(found.meta, options);
  }

  /** Every live (present, unexpired) artifact, by ascending id; an alias never lists twice. */
  list(): ArtifactRef[] {
    const now = this.now();
    return this.index
      .scan()
      .filter((f) => f.size !== null && !isExpired(f.meta, now))
      .map((f) => this.toRef(f.meta, f.size!));
  }

  /** Count and content bytes of the live artifacts (exactly what `list()` returns). */
  stats(): ArtifactStats {
    let totalBytes = 0;
    const live = this.list();
    for (const ref of live) totalBytes += ref.sizeBytes;
    return { artifactCount: live.length, totalBytes };
  }

  /** Deletes the files of expired artifacts; returns how many were removed. */
  cleanupExpired(): number {
    if (!this.ids.existingDir()) return 0;
    const now = this.now();
    return this.ids.remove(this.index.scan().filter((f) => f.size !== null && isExpired(f.meta, now)));
  }

  /**
   * Deletes every artifact (agent outputs stay) and temp files left by crashed writers; returns
   * how many artifacts were removed. A temp file younger than an hour may belong to a writer that
   * is still streaming in another process, so it is spared.
   */
  clear(): number {
    if (!this.ids.existingDir()) return 0;
    const removed = this.ids.remove(this.index.scan().filter((f) => f.size !== null));
    const cutoff = this.now() - TEMP_GRACE_MS;
    for (const entry of listEntries(this.dir)) {
      if (!entry.isFile() || !isTempFileName(entry.name)) continue;
      const path = join(this.dir, entry.name);
      try {
        if (io.lstatSync(path).mtimeMs <= cutoff) removeQuietly(path);
      } catch {
        // gone already: its writer finished or gave up
      }
    }
    return removed;
  }

  /**
   * Pointer envelope (docs/artifacts.md, Pointer envelopes): returns `value` itself when its
   * serialized UTF-8 size is below `maxInlineBytes`, else stores it and returns
   * `{ pointer, preview, sizeBytes, note }`.
   */
  spill<T>(value: T, options: SpillOptions): SpillResult<T> {
    return spillValue(this, value, options);
  }

  /** Reserves the next free agent output id: `name`, `name-2`, … (after `parentPrefix.` when given). */
  allocateAgentOutputId(name: string, options: AllocateAgentOutputOptions = {}): string {
    return this.agentOutputs.allocate(name, options);
  }

  /** Writes `<id>.md` (replacing any earlier output of that id by rename). */
  saveAgentOutput(id: string, markdown: string): AgentOutputRef {
    const counts: RedactionCounts = new Map();
    const text = this.redactor === null || typeof markdown !== "string" ? markdown : this.redactor.redactText(markdown, counts);
    const ref = this.agentOutputs.save(id, text);
    this.reportRedacted(`Agent output ${id}`, counts, ref.path);
    return ref;
  }

  /** An agent output's markdown, or `null` when absent. */
  getAgentOutput(id: string): string | null {
    return this.agentOutputs.read(id);
  }

  /** @internal A page of an agent output's lines, streamed from its file; `null` when absent. */
  readAgentOutput(id: string, options: LinePageOptions = {}): LinePage | null {
    validatePageOptions(options);
    return this.agentOutputs.readPage(id, options);
  }

  /** Ids of the stored agent outputs, sorted. */
  listAgentOutputs(): string[] {
    return this.agentOutputs.list();
  }

  // ---- internals shared with the writer, agent outputs and pointers ----

  /** @internal Creates the directory (0700) on the first write; refuses a symlink planted in its place. */
  prepareDir(): void {
    this.ids.prepareDir();
  }

  /** @internal The store's clock. */
  clock(): number {
    return this.now();
  }

  /** @internal */
  warn(warning: StoreWarning): void {
    this.onWarning?.(warning);
  }

  /** @internal Claims the next id (an exclusive create; an id is never issued twice in a directory). */
  claimId(): string {
    return this.ids.claim();
  }

  /** @internal Gives up a claimed id after a failed write; it stays taken (a tombstone). */
  releaseId(id: string): void {
    this.ids.release(id);
  }

  /** @internal Records metadata written by a writer. */
  remember(meta: ArtifactMeta): void {
    this.index.remember(meta);
  }

  /** @internal */
  toRef(meta: ArtifactMeta, size: number): ArtifactRef {
    const ref: ArtifactRef = {
      id: meta.id,
      uri: `artifact://${meta.id}`,
      path: this.index.logPath(meta),
      toolType: meta.toolType,
      summary: meta.summary ?? this.index.summaryFromFile(meta),
      sizeBytes: size,
      createdAt: meta.createdAt,
      contentType: meta.contentType,
    };
    if (meta.name !== undefined) ref.name = meta.name;
    if (meta.expiresAt !== undefined) ref.expiresAt = meta.expiresAt;
    return ref;
  }

  /** Resolves an id, a name or an `artifact://` URI to a present, unexpired artifact. */
  private findLive(key: string): Found | null {
    if (typeof key !== "string") throw new TranscriptStoreError("INVALID_ARTIFACT_ID", `Artifact id must be a string, got: ${typeof key}`);
    let found: Found | null;
    if (key.startsWith("artifact://")) found = this.index.findById(parseArtifactId(key.slice("artifact://".length)));
    else if (isArtifactId(key)) found = this.index.findById(String(Number(key)));
    else found = this.index.findByName(key);
    if (found === null || found.size === null || isExpired(found.meta, this.now())) return null;
    return found;
  }
}
