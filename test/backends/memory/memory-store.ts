import { createHash } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toBlobRef } from "../../../src/blob/blob-ref.ts";
import { MemoryBlobs } from "../../../src/blob/memory-blobs.ts";
import { TranscriptStoreError } from "../../../src/errors.ts";
import type { SessionHeader } from "../../../src/format/types.ts";
import type { SessionInfo } from "../../../src/session/session-info.ts";
import type { Blobs } from "../../../src/storage/session-storage.ts";
import { previewOfLine, type StoredLine } from "../../../src/storage/stored-lines.ts";

/** One stored session: its header line and entry lines, and who writes it. */
export interface MemorySession {
  header: SessionHeader;
  headerLine: string;
  lines: StoredLine[];
  /** The writer holding it (one at a time), or null. */
  holder: symbol | null;
  /** Its artifacts directory (the backend's own temp directory, never the file root). */
  artifactsDir: string;
  modified: Date;
}

/**
 * The state of one in-memory store: sessions by id, one blob store for all of them (with the time
 * each blob was put, for gc's grace period), and a private temp directory for artifacts.
 */
export class MemoryStore {
  readonly sessions = new Map<string, MemorySession>();
  readonly blobs = new MemoryBlobs();
  readonly putAt = new Map<string, number>();
  readonly dir = mkdtempSync(join(tmpdir(), "ts-memory-store-"));

  constructor(readonly name: string) {}

  /** Stores blob bytes now (synchronously: an append's blobs are in before its line), noting when. */
  put(bytes: Uint8Array): { hash: string; ref: string; existed: boolean } {
    const hash = createHash("sha256").update(bytes).digest("hex");
    const existed = this.blobs.getVerifiedSync(hash) !== null;
    if (!existed) {
      void this.blobs.put(bytes); // MemoryBlobs stores before its first await
      this.putAt.set(hash, Date.now());
    }
    return { hash, ref: toBlobRef(hash), existed };
  }

  /** The store's blobs as the public API sees them (a put is timed for gc's grace period). */
  blobsView(): Blobs {
    return {
      put: async (bytes) => this.put(bytes),
      get: (h) => this.blobs.get(h),
      has: (h) => this.blobs.has(h),
      list: () => this.blobs.list(),
      delete: (h) => this.blobs.delete(h),
    };
  }

  location(id: string): string {
    return `${this.name}#${id}`;
  }

  artifactsDirOf(id: string): string {
    return join(this.dir, Buffer.from(id).toString("hex"));
  }

  /** The session `ref` names: its id, or an unambiguous prefix (`SESSION_NOT_FOUND`, `SESSION_AMBIGUOUS`). */
  find(ref: string, cwd?: string): MemorySession {
    const exact = this.sessions.get(ref);
    if (exact !== undefined) return exact;
    const found = [...this.sessions.values()].filter((s) => s.header.id.startsWith(ref) && (cwd === undefined || s.header.cwd === cwd));
    if (found.length === 1) return found[0]!;
    if (found.length === 0) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session ${ref} in ${this.name}`);
    throw new TranscriptStoreError("SESSION_AMBIGUOUS", `"${ref}" matches ${found.length} sessions in ${this.name}`);
  }

  /** A listing of one session, as a database lists it: `path` is its id. */
  infoOf(s: MemorySession): SessionInfo {
    const first = s.lines.map((l) => previewOfLine(l.line)).find((p) => p !== null) ?? null;
    return {
      path: s.header.id,
      id: s.header.id,
      cwd: s.header.cwd,
      title: typeof s.header.title === "string" ? s.header.title : null,
      created: new Date(s.header.timestamp),
      modified: s.modified,
      size: Buffer.byteLength(s.headerLine) + 1 + s.lines.reduce((n, l) => n + Buffer.byteLength(l.line) + 1, 0),
      messageCount: s.lines.filter((l) => l.kind === "message").length,
      messageCountExact: true,
      firstMessage: first,
      parentSession: typeof s.header.parentSession === "string" ? s.header.parentSession : null,
      tornTail: false,
    };
  }
}
