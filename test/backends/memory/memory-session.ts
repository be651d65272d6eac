import { cpSync, existsSync } from "node:fs";
import { ArtifactStore } from "../../../src/artifacts/artifact-store.ts";
import { TranscriptStoreError } from "../../../src/errors.ts";
import { emptyLoadReport } from "../../../src/format/load-report.ts";
import { isRecord, type SessionEntry, type SessionHeader } from "../../../src/format/types.ts";
import type { ResolvedSessionManagerOptions } from "../../../src/session/session-options.ts";
import type { ForkRequest, OpenedSession, SessionStorage, StorageHooks } from "../../../src/storage/session-storage.ts";
import { prepareStoredLine, type StoredLine } from "../../../src/storage/stored-lines.ts";
import type { MemorySession, MemoryStore } from "./memory-store.ts";

/** What a session is opened with: the store, the session (null while a deferred one waits), the writer's token. */
export interface MemoryOpen {
  store: MemoryStore;
  header: SessionHeader;
  session: MemorySession | null;
  holder: symbol | null;
  options: ResolvedSessionManagerOptions;
}

/** A new session in `store` holding `lines` (its writer: `holder`). */
export function addSession(store: MemoryStore, header: SessionHeader, lines: StoredLine[], holder: symbol | null): MemorySession {
  if (store.sessions.has(header.id)) throw new TranscriptStoreError("SESSION_EXISTS", `Session ${header.id} exists in ${store.name}`);
  const session: MemorySession = {
    header,
    headerLine: JSON.stringify(header),
    lines,
    holder,
    artifactsDir: store.artifactsDirOf(header.id),
    modified: new Date(header.timestamp),
  };
  store.sessions.set(header.id, session);
  return session;
}

/** An opened session as the manager receives it (entries given). */
export function openedSession(open: MemoryOpen, entries: SessionEntry[]): OpenedSession {
  return {
    header: open.header,
    entries,
    loadReport: emptyLoadReport(),
    storage: (hooks) => new MemorySessionStorage(open, hooks),
  };
}

const isAssistant = (e: SessionEntry) => e.type === "message" && isRecord(e.message) && e.message.role === "assistant";

/** One open session of the in-memory store: appends become stored lines at once (nothing to flush). */
export class MemorySessionStorage implements SessionStorage {
  readonly kind = "memory-test";
  readonly path = null;
  readonly location: string;
  readonly blobs;
  readonly blobReader;
  private pending: StoredLine[] = [];
  private artifactStore: ArtifactStore | null = null;

  constructor(
    private readonly open: MemoryOpen,
    private readonly hooks: StorageHooks,
  ) {
    this.location = open.store.location(open.header.id);
    this.blobs = open.store.blobsView();
    this.blobReader = open.store.blobs;
  }

  persist(entry: SessionEntry): SessionEntry {
    const { store, options } = this.open;
    const prepared = prepareStoredLine(entry, options.prepare, (w) => this.hooks.warn(w));
    for (const b of prepared.blobs) store.put(b.bytes);
    if (this.open.session === null) {
      this.pending.push(prepared.row);
      if (isAssistant(entry)) this.open.session = addSession(store, this.hooks.header(), this.pending.splice(0), this.open.holder);
    } else {
      this.open.session.lines.push(prepared.row);
      this.open.session.modified = options.now();
    }
    return options.rehydrate === "lazy" ? prepared.prepared : entry;
  }

  asStored(entry: SessionEntry): SessionEntry {
    return entry;
  }

  assertHeld(): void {}

  artifacts(): ArtifactStore | null {
    const { options } = this.open;
    this.artifactStore ??= new ArtifactStore(this.open.store.artifactsDirOf(this.open.header.id), {
      onWarning: options.onWarning,
      now: () => options.now().getTime(),
    });
    return this.artifactStore;
  }

  async fork(request: ForkRequest): Promise<OpenedSession> {
    const { store } = this.open;
    const lines = request.entries.map((e) => {
      const prepared = prepareStoredLine(e, request.options.prepare, (w) => this.hooks.warn(w));
      for (const b of prepared.blobs) store.put(b.bytes);
      return prepared.row;
    });
    const holder = Symbol("writer");
    const session = addSession(store, request.header, lines, holder);
    const from = store.artifactsDirOf(this.open.header.id);
    if (existsSync(from)) cpSync(from, session.artifactsDir, { recursive: true });
    return openedSession({ store, header: request.header, session, holder, options: request.options }, request.entries);
  }

  async moveTo(header: SessionHeader): Promise<void> {
    const session = this.open.session;
    if (session !== null) {
      session.header = header;
      session.headerLine = JSON.stringify(header);
    }
    this.open.header = header;
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {
    const session = this.open.session;
    if (session !== null && this.open.holder !== null && session.holder === this.open.holder) session.holder = null;
  }
}
