import { join } from "node:path";
import { isStoreError, TranscriptStoreError } from "../errors.ts";
import { closeQuietly, FILE_MODE, fsyncDir, io, removeQuietly, tempPathFor, writeFileAtomic, writeFully } from "../io.ts";
import { publishNew, writeNew } from "../io-exclusive.ts";
import type { ArtifactStore } from "./artifact-store.ts";
import { assertWellFormedText } from "./artifact-values.ts";
import { logFileName, metaFileName } from "./artifact-names.ts";
import { redactLabels } from "./artifact-labels.ts";
import { defaultContentType, encodeMeta, summarize, SUMMARY_CHARS, type ArtifactMeta, type ArtifactRef } from "./metadata.ts";
import { validateSaveOptions, type WriterOptions } from "./save-options.ts";
import type { RedactionCounts, SecretRedactor } from "../prepare/redact-secrets.ts";

/** Bytes of the stream's start kept for the summary (enough for 200 characters of any script). */
const HEAD_BYTES = SUMMARY_CHARS * 6;

/**
 * A streaming artifact: its id is claimed at once (so a caller can mention `artifact://<id>`
 * while output still flows), chunks go to a temp file, and `finish()` writes the metadata and
 * renames the file into place. Until then the artifact does not exist for readers; a crash
 * leaves only a temp file and a pending claim, never a half artifact.
 */
export class ArtifactWriter {
  readonly id: string;
  readonly uri: string;
  readonly toolType: string;
  private readonly store: ArtifactStore;
  private readonly options: WriterOptions;
  private readonly createdAt: number;
  private readonly tempPath: string;
  private fd: number | undefined;
  private bytes = 0;
  private head: Buffer[] = [];
  private headBytes = 0;
  private state: "open" | "finished" | "aborted" = "open";
  /** An encrypted session's stream: kept in memory, sealed whole on `finish()` (nothing in clear on disk). */
  private readonly chunks: Buffer[] | null;

  /** Use `ArtifactStore.createWriter`. */
  constructor(store: ArtifactStore, toolType: string, options: WriterOptions) {
    this.options = validateSaveOptions({ ...options });
    this.store = store;
    this.toolType = toolType;
    this.id = store.claimId();
    this.uri = `artifact://${this.id}`;
    this.createdAt = store.clock();
    this.tempPath = tempPathFor(join(store.dir, logFileName(this.id, toolType)));
    this.chunks = store.cipher === null ? null : [];
    if (this.chunks !== null) return;
    try {
      this.fd = io.openSync(this.tempPath, "wx", FILE_MODE);
    } catch (err) {
      store.releaseId(this.id);
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not open artifact ${this.id} for writing: ${(err as Error).message}`, {
        path: this.tempPath,
        cause: err,
      });
    }
  }

  /** Bytes written so far. */
  get size(): number {
    return this.bytes;
  }

  /**
   * Appends a chunk (strings as UTF-8; one holding a lone surrogate is refused, `INVALID_OPTION`,
   * nothing written). A failed write throws `PERSISTENCE_FAILED`; call `abort()` then.
   */
  write(chunk: string | Uint8Array): void {
    if (this.state !== "open" || (this.fd === undefined && this.chunks === null))
      throw new TranscriptStoreError("INVALID_OPTION", `Artifact writer ${this.id} is ${this.state}`);
    if (typeof chunk === "string") assertWellFormedText(chunk, `A chunk of artifact ${this.id}`);
    const data = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    try {
      if (this.chunks !== null) this.chunks.push(Buffer.from(data));
      else writeFully(this.fd!, data);
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not write artifact ${this.id}: ${(err as Error).message}`, {
        path: this.tempPath,
        cause: err,
      });
    }
    this.bytes += data.length;
    if (this.headBytes < HEAD_BYTES) {
      const take = Buffer.from(data.subarray(0, HEAD_BYTES - this.headBytes));
      this.head.push(take);
      this.headBytes += take.length;
    }
  }

  /** Publishes the artifact: metadata first, then the content file by rename. */
  finish(): ArtifactRef {
    if (this.state !== "open" || (this.fd === undefined && this.chunks === null))
      throw new TranscriptStoreError("INVALID_OPTION", `Artifact writer ${this.id} is ${this.state}`);
    if (this.chunks !== null) return this.finishSealed(this.chunks);
    const store = this.store;
    const counts: RedactionCounts = new Map();
    if (store.redactor !== null) this.redactTemp(store.redactor, counts);
    const meta: ArtifactMeta = {
      v: 1,
      id: this.id,
      toolType: this.toolType,
      summary: this.options.summary ?? summarize(Buffer.concat(this.head).toString("utf8")),
      sizeBytes: this.bytes,
      createdAt: this.createdAt,
      contentType: this.options.contentType ?? defaultContentType("text"),
      encoding: "text",
    };
    if (this.options.name !== undefined) meta.name = this.options.name;
    if (this.options.ttlMs !== undefined) meta.expiresAt = this.createdAt + this.options.ttlMs;
    if (store.redactor !== null) redactLabels(meta, store.redactor, counts);
    try {
      if (store.fsync) io.fsyncSync(this.fd!);
      io.closeSync(this.fd!);
      this.fd = undefined;
      writeFileAtomic(join(store.dir, metaFileName(this.id)), encodeMeta(meta), { fsync: store.fsync });
      // Never over whatever already holds the name (another tool's file, a planted symlink).
      const finalPath = join(store.dir, logFileName(this.id, this.toolType));
      if (!publishNew(this.tempPath, finalPath)) {
        throw new TranscriptStoreError("OUTPUT_EXISTS", `Could not finish artifact ${this.id}: ${finalPath} already exists`, {
          path: finalPath,
        });
      }
      if (store.fsync) fsyncDir(store.dir);
    } catch (err) {
      this.abort();
      if (isStoreError(err, "OUTPUT_EXISTS")) throw err;
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not finish artifact ${this.id}: ${(err as Error).message}`, {
        path: this.tempPath,
        cause: err,
      });
    }
    this.state = "finished";
    store.remember(meta);
    store.reportRedacted(`Artifact ${this.id}`, counts, join(store.dir, logFileName(this.id, this.toolType)));
    return store.toRef(meta, this.bytes);
  }

  /** `finish()` of an encrypted session's stream: redacted, sealed whole, published without replacing anything. */
  private finishSealed(chunks: Buffer[]): ArtifactRef {
    const store = this.store;
    const counts: RedactionCounts = new Map();
    let content = Buffer.concat(chunks);
    if (store.redactor !== null) {
      const text = content.toString("latin1");
      const out = store.redactor.redactText(text, counts);
      if (out !== text) content = Buffer.from(out, "latin1");
    }
    const meta: ArtifactMeta = {
      v: 1,
      id: this.id,
      toolType: this.toolType,
      sizeBytes: content.length,
      createdAt: this.createdAt,
      contentType: this.options.contentType ?? defaultContentType("text"),
      encoding: "text",
    };
    if (this.options.name !== undefined) meta.name = this.options.name;
    if (this.options.ttlMs !== undefined) meta.expiresAt = this.createdAt + this.options.ttlMs;
    if (store.redactor !== null) redactLabels(meta, store.redactor, counts);
    const name = logFileName(this.id, this.toolType);
    const finalPath = join(store.dir, name);
    try {
      writeFileAtomic(join(store.dir, metaFileName(this.id)), encodeMeta(meta), { fsync: store.fsync });
      if (!writeNew(finalPath, store.sealed(name, content), { fsync: store.fsync })) {
        throw new TranscriptStoreError("OUTPUT_EXISTS", `Could not finish artifact ${this.id}: ${finalPath} already exists`, {
          path: finalPath,
        });
      }
    } catch (err) {
      this.abort();
      if (isStoreError(err, "OUTPUT_EXISTS")) throw err;
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not finish artifact ${this.id}: ${(err as Error).message}`, {
        path: finalPath,
        cause: err,
      });
    }
    this.bytes = content.length;
    this.state = "finished";
    store.remember(meta);
    store.reportRedacted(`Artifact ${this.id}`, counts, finalPath);
    return store.toRef(meta, this.bytes);
  }

  /**
   * Redacts the finished stream in its temp file (read whole once: a secret may straddle chunks),
   * as latin1 so every byte but the secrets' survives; size and summary follow the new content.
   */
  private redactTemp(redactor: SecretRedactor, counts: RedactionCounts): void {
    let text: string;
    try {
      text = io.readFileSync(this.tempPath).toString("latin1");
    } catch (err) {
      this.abort();
      throw new TranscriptStoreError(
        "PERSISTENCE_FAILED",
        `Could not read artifact ${this.id} back to redact it: ${(err as Error).message}`,
        {
          path: this.tempPath,
          cause: err,
        },
      );
    }
    const out = redactor.redactText(text, counts);
    if (out === text) return;
    const data = Buffer.from(out, "latin1");
    try {
      io.ftruncateSync(this.fd!, 0);
      io.writeSync(this.fd!, data, 0, data.length, 0);
    } catch (err) {
      this.abort();
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not write artifact ${this.id} redacted: ${(err as Error).message}`, {
        path: this.tempPath,
        cause: err,
      });
    }
    this.bytes = data.length;
    this.head = [Buffer.from(data.subarray(0, HEAD_BYTES))];
    this.headBytes = this.head[0]!.length;
  }

  /** Drops the stream: removes the temp file and gives up the id. Safe to call twice. */
  abort(): void {
    if (this.state === "finished") return;
    this.state = "aborted";
    if (this.chunks !== null) this.chunks.length = 0;
    closeQuietly(this.fd);
    this.fd = undefined;
    removeQuietly(this.tempPath);
    this.store.releaseId(this.id);
  }
}
