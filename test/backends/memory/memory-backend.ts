import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { blobRefsIn } from "../../../src/blob/blob-ref.ts";
import { TranscriptStoreError } from "../../../src/errors.ts";
import type { SessionHeader } from "../../../src/format/types.ts";
import type { DiscoveryOptions } from "../../../src/session/discovery.ts";
import { rehydrateValue } from "../../../src/session/rehydrate.ts";
import { resolveRecordedCwd } from "../../../src/session/paths.ts";
import type { SessionInfo } from "../../../src/session/session-info.ts";
import type { ResolvedSessionManagerOptions } from "../../../src/session/session-options.ts";
import { supporting } from "../../../src/storage/capabilities.ts";
import { relateSessions } from "../../../src/storage/session-relation.ts";
import {
  bytesSource,
  hashesIn,
  type ImportOutcome,
  importConflict,
  readAllBytes,
  type SessionSnapshot,
  type SnapshotArtifact,
  verifiedSnapshotBlob,
} from "../../../src/storage/session-snapshot.ts";
import { fileBytes } from "../../../src/storage/session-file-lines.ts";
import type { OpenedSession, StorageBackend, StoreGcOptions, StoreGcReport } from "../../../src/storage/session-storage.ts";
import { entriesOf, storedLineRow } from "../../../src/storage/stored-lines.ts";
import { addSession, openedSession } from "./memory-session.ts";
import { type MemorySession, MemoryStore } from "./memory-store.ts";

let stores = 0;

/**
 * A third backend, written from docs/architecture.md ("Add a storage backend") and kept under test/
 * (not shipped): sessions as stored lines in memory, one writer per session, blobs in memory,
 * artifacts in a private temp directory. It declares no optional capability, so the conformance
 * tests run on it only what every backend must do.
 */
export class MemoryBackend implements StorageBackend {
  readonly kind = "memory-test";
  readonly supports = supporting();
  readonly name: string;
  private readonly store: MemoryStore;

  constructor() {
    this.name = `memory://${++stores}`;
    this.store = new MemoryStore(this.name);
  }

  /** Session `id`'s entry lines as stored (the conformance tests' `storedLines` hook). */
  linesOf(id: string): string[] {
    return this.store.find(id).lines.map((l) => l.line);
  }

  async create(header: SessionHeader, options: ResolvedSessionManagerOptions): Promise<OpenedSession> {
    const holder = Symbol("writer");
    const session = options.deferUntilAssistant ? null : addSession(this.store, header, [], holder);
    return openedSession({ store: this.store, header, session, holder, options }, []);
  }

  async open(ref: string, options: ResolvedSessionManagerOptions): Promise<OpenedSession> {
    const session = this.store.find(ref);
    let holder: symbol | null = null;
    if (!options.readOnly) {
      if (session.holder !== null) throw new TranscriptStoreError("SESSION_LOCKED", `Session ${session.header.id} has a writer`);
      holder = Symbol("writer");
      session.holder = holder;
    }
    const { entries, withRefs } = entriesOf(session.lines.map((l, i) => ({ seq: i + 1, entryId: l.entryId, kind: l.kind, line: l.line })));
    const warn = options.onWarning;
    const given =
      options.rehydrate === "eager" ? entries.map((e) => (withRefs.has(e) ? rehydrateValue(e, this.store.blobs, warn) : e)) : entries;
    return openedSession({ store: this.store, header: session.header, session, holder, options }, given);
  }

  async list(cwd: string | null, _options: ResolvedSessionManagerOptions & DiscoveryOptions): Promise<SessionInfo[]> {
    const where = cwd === null ? null : resolveRecordedCwd(cwd);
    return [...this.store.sessions.values()]
      .filter((s) => where === null || s.header.cwd === where)
      .map((s) => this.store.infoOf(s))
      .sort((a, b) => b.modified.getTime() - a.modified.getTime() || (a.id < b.id ? 1 : -1));
  }

  async resolve(arg: string, cwd: string, _options: ResolvedSessionManagerOptions & DiscoveryOptions): Promise<SessionInfo> {
    try {
      return this.store.infoOf(this.store.find(arg, resolveRecordedCwd(cwd)));
    } catch (err) {
      if (!(err instanceof TranscriptStoreError) || err.code !== "SESSION_NOT_FOUND") throw err;
      return this.store.infoOf(this.store.find(arg));
    }
  }

  async gc(_options: ResolvedSessionManagerOptions, gc: StoreGcOptions): Promise<StoreGcReport> {
    const referenced = new Set([...this.store.sessions.values()].flatMap((s) => s.lines.flatMap((l) => blobRefsIn(l.line))));
    const cutoff = Date.now() - (gc.graceMs ?? 3_600_000);
    const report: StoreGcReport = { deleted: [], bytesFreed: 0 };
    for await (const hash of this.store.blobs.list()) {
      if (referenced.has(hash) || (this.store.putAt.get(hash) ?? 0) > cutoff) continue;
      report.deleted.push(hash);
      report.bytesFreed += this.store.blobs.getVerifiedSync(hash)?.length ?? 0;
      if (gc.dryRun !== true) await this.store.blobs.delete(hash);
    }
    return report;
  }

  async locate(id: string, _options: ResolvedSessionManagerOptions): Promise<string | null> {
    return this.store.sessions.has(id) ? id : null;
  }

  async has(id: string, options: ResolvedSessionManagerOptions): Promise<boolean> {
    return (await this.locate(id, options)) !== null;
  }

  async exportSnapshot(ref: string, _options: ResolvedSessionManagerOptions): Promise<SessionSnapshot> {
    const s = this.store.sessions.get(ref);
    if (s === undefined) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session ${ref} in ${this.name}`);
    const lines = s.lines.map((l) => l.line);
    const blobs = this.store.blobs;
    return {
      header: s.header,
      headerLine: s.headerLine,
      lines: async function* () {
        yield* lines;
      },
      quarantine: async function* () {},
      artifacts: () => artifactFiles(s.artifactsDir),
      blobHashes: async function* () {
        yield* new Set(lines.flatMap(hashesIn));
      },
      blob: async (hash) => {
        const bytes = blobs.getVerifiedSync(hash);
        return bytes === null ? null : bytesSource(bytes);
      },
    };
  }

  async importSnapshot(snapshot: SessionSnapshot, _options: ResolvedSessionManagerOptions): Promise<ImportOutcome> {
    const { id } = snapshot.header;
    const location = this.store.location(id);
    for await (const _ of snapshot.quarantine()) {
      throw new TranscriptStoreError("INVALID_OPTION", `damaged records: ${this.name} keeps no quarantine`);
    }
    const lines: string[] = [];
    for await (const line of snapshot.lines()) lines.push(line);
    const blobs = await missingBlobs(this.store, snapshot);
    const artifacts = await readArtifacts(snapshot);
    const existing = this.store.sessions.get(id);
    const outcome = (status: ImportOutcome["status"], relation: ImportOutcome["relation"]): ImportOutcome => ({
      status,
      id,
      location,
      relation,
      header: relation === "storeAhead" ? "kept" : "same",
      lines: lines.length,
    });
    if (existing === undefined) {
      const session = addSession(
        this.store,
        snapshot.header,
        lines.map((l) => storedLineRow(l)),
        null,
      );
      session.headerLine = snapshot.headerLine;
      this.carry(session, blobs, artifacts);
      return outcome("created", null);
    }
    const relation = relateSessions(
      [snapshot.headerLine, ...lines][Symbol.iterator](),
      [existing.headerLine, ...existing.lines.map((l) => l.line)][Symbol.iterator](),
    );
    if (relation === "diverged") throw importConflict(id, location);
    if (relation !== "sourceAhead") return outcome("unchanged", relation);
    if (existing.holder !== null) throw new TranscriptStoreError("SESSION_LOCKED", `Session ${id} has a writer`);
    existing.lines.push(...lines.slice(existing.lines.length).map((l) => storedLineRow(l)));
    this.carry(existing, blobs, artifacts);
    return outcome("appended", relation);
  }

  private carry(session: MemorySession, blobs: Buffer[], artifacts: Array<[string, Buffer]>): void {
    for (const bytes of blobs) this.store.put(bytes);
    for (const [name, bytes] of artifacts) {
      const path = join(session.artifactsDir, name);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, bytes);
    }
  }
}

/** The blobs a snapshot's lines reference that the store lacks, read and checked (`BLOB_MISSING`, `BLOB_CORRUPT`). */
async function missingBlobs(store: MemoryStore, snapshot: SessionSnapshot): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const hash of snapshot.blobHashes()) {
    if (store.blobs.getVerifiedSync(hash) !== null) continue;
    const bytes = await verifiedSnapshotBlob(snapshot, hash);
    if (bytes === null) throw new TranscriptStoreError("BLOB_MISSING", `blob ${hash} is referenced but the snapshot lacks it`);
    out.push(bytes);
  }
  return out;
}

/** A snapshot's artifact files, each name kept inside the session (`INVALID_OPTION` for one that is not). */
async function readArtifacts(snapshot: SessionSnapshot): Promise<Array<[string, Buffer]>> {
  const out: Array<[string, Buffer]> = [];
  for await (const a of snapshot.artifacts()) {
    const name = posix.normalize(a.name);
    if (name !== a.name || name.startsWith("../") || name.startsWith("/") || name === "..") {
      throw new TranscriptStoreError("INVALID_OPTION", `artifact name ${JSON.stringify(a.name)} leaves the session`);
    }
    out.push([name, await readAllBytes(a)]);
  }
  return out;
}

/** Every file under `dir`, named by its path inside it. */
async function* artifactFiles(dir: string, prefix = ""): AsyncIterable<SnapshotArtifact> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.isDirectory()) yield* artifactFiles(join(dir, e.name), `${prefix}${e.name}/`);
    else if (e.isFile()) yield { name: `${prefix}${e.name}`, ...fileBytes(join(dir, e.name)) };
  }
}
