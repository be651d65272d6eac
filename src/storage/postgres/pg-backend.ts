import { randomBytes } from "node:crypto";
import { resolveRecordedCwd } from "../../session/paths.ts";
import type { Pool } from "./db/pg-client.ts";
import { type StoreWarning, TranscriptStoreError } from "../../errors.ts";
import { emptyLoadReport } from "../../format/load-report.ts";
import type { SessionEntry, SessionHeader } from "../../format/types.ts";
import {
  type ArtifactRewrite,
  type PgBlobWrite,
  type PgLine,
  PgStore,
  type PgSession,
  type PgSessionInfo,
  type PgStoreOptions,
} from "./db/index.ts";
import { rehydrateValue } from "../../session/rehydrate.ts";
import type { SessionInfo } from "../../session/session-info.ts";
import type { ResolvedSessionManagerOptions } from "../../session/session-options.ts";
import type { DiscoveryOptions } from "../../session/discovery.ts";
import type { ForkRequest, OpenedSession, StorageBackend, StorageHooks, StoreGcOptions, StoreGcReport } from "../session-storage.ts";
import { redactUrl } from "../redact-url.ts";
import type { SessionIndex } from "../../search/index-types.ts";
import { PgArtifactMirror } from "./pg-artifacts.ts";
import { ArtifactCipher } from "../../artifacts/artifact-cipher.ts";
import { resealContent } from "../../artifacts/artifact-reseal.ts";
import { blobsView, PgBlobCache } from "./pg-blob-cache.ts";
import { PgSessionIndex } from "./pg-index.ts";
import { reindexSearchSessions } from "./db/search-index.ts";
import { entriesOf, parseHeader, prepareRow, previewOfLine } from "./pg-lines.ts";
import { type ForkSource, PgSessionStorage } from "./pg-session.ts";
import { exportPg, importPg } from "./pg-transfer.ts";
import type { ImportOutcome, SessionSnapshot } from "../session-snapshot.ts";
import { PgLifecycle } from "./pg-lifecycle.ts";
import { leaseHolder } from "./pg-lease-holder.ts";
import { openRows, pgCipher, sealRow, withSessionKey } from "./pg-cipher.ts";
import type { LineCipher, StoreKey } from "../../crypto/line-cipher.ts";
import type { SecretRedactor } from "../../prepare/redact-secrets.ts";
import { rekeyPgSession, type PgRekeyReport } from "./pg-rekey.ts";
import { redactPgSession, type PgRedactOptions, type PgRedactReport } from "./pg-redact.ts";
import type { LifecycleDriver } from "../../lifecycle/lifecycle-driver.ts";
import { supporting } from "../capabilities.ts";
import type { AccountingDriver, MaintenanceDriver } from "../store-drivers.ts";
import { pgAccounting, pgStats, pgVerifyBlobs } from "./pg-drivers.ts";

/** What `opened` needs to know of a session's row and lease. */
interface OpenState {
  token: number | null;
  holder: string;
  nextSeq: number;
  created: boolean;
  firstMessageKnown: boolean;
  /** Blobs the rows reference (fetched for synchronous rehydration). */
  refs?: Set<string>;
  /** Entries whose line names a ref (only they are rehydrated). */
  withRefs?: Set<SessionEntry>;
  /** An encrypted session's key (null: plain). */
  key: StoreKey | null;
}

/**
 * Sessions in PostgreSQL (docs/postgres.md): the same `SessionManager` over rows. Create one per
 * database and share it (`SessionManager.create(cwd, { store })`), or pass the URL as `store` (one
 * backend per URL and process). `close()` ends its connections.
 */
export class PostgresBackend implements StorageBackend {
  readonly kind = "postgres" as const;
  /** No quarantine (a database keeps no damaged lines), no session files, no byte-copy fork. */
  readonly supports = supporting("lifecycle", "index", "accounting", "encryption", "maintenance");
  private connecting: Promise<PgStore> | null = null;

  private constructor(
    private readonly target: string | Pool,
    private readonly storeOptions: PgStoreOptions,
    readonly name: string,
  ) {}

  /** A backend over `target` (a `postgres://` URL or a `pg.Pool` you share); it connects on first use. */
  static of(target: string | Pool, options: PgStoreOptions = {}): PostgresBackend {
    const name = typeof target === "string" ? redactUrl(target) : "postgres";
    return new PostgresBackend(target, options, name);
  }

  /** The connected store (schema created or migrated once). */
  connect(): Promise<PgStore> {
    if (this.connecting === null) {
      this.connecting = PgStore.connect(this.target, this.storeOptions);
      this.connecting.catch(() => {
        this.connecting = null; // a failed connect is tried again by the next call
      });
    }
    return this.connecting;
  }

  async close(): Promise<void> {
    const connecting = this.connecting;
    this.connecting = null;
    if (connecting !== null) await (await connecting).close();
  }

  async create(header: SessionHeader, options: ResolvedSessionManagerOptions): Promise<OpenedSession> {
    const store = await this.connect();
    await loadRedactionKey(store, options);
    const holder = leaseHolder();
    const key = options.encryption?.key ?? null;
    pgCipher(header, key); // an encrypted header needs its key before anything is written
    if (options.deferUntilAssistant) {
      return this.opened(store, header, [], options, { token: null, holder, nextSeq: 1, created: false, firstMessageKnown: false, key });
    }
    const { token } = await store.createSession(JSON.stringify(header), { lease: { holder, ttlMs: options.lockStaleMs } });
    return this.opened(store, header, [], options, { token, holder, nextSeq: 1, created: true, firstMessageKnown: false, key });
  }

  async open(ref: string, options: ResolvedSessionManagerOptions): Promise<OpenedSession> {
    const store = await this.connect();
    const holder = leaseHolder();
    const id = (await store.resolveSession(ref)).id;
    let token: number | null = null;
    if (!options.readOnly) await loadRedactionKey(store, options);
    if (!options.readOnly) token = await store.leases.acquire(id, holder, options.lockStaleMs);
    try {
      // Read after the lease is ours: every committed row is in the snapshot, and no one appends after it.
      const { session, entries: rows } = await store.loadSession(id);
      const header = parseHeader(session.header, `${this.name}#${id}`);
      // An encrypted session's rows are opened before anything looks at them (nothing is served when one fails).
      const key = (await withSessionKey(options, header)).encryption?.key ?? null;
      const { entries, report, refs, withRefs } = entriesOf(openRows(header, rows, pgCipher(header, key)));
      const opened = await this.opened(store, header, entries, options, {
        token,
        holder,
        nextSeq: session.lastSeq + 1,
        created: true,
        firstMessageKnown: session.firstMessage !== null,
        refs,
        withRefs,
        key,
      });
      return { ...opened, loadReport: report };
    } catch (err) {
      if (token !== null) await store.leases.release(id, token).catch(() => false);
      throw err;
    }
  }

  async list(cwd: string | null, _options: ResolvedSessionManagerOptions & DiscoveryOptions): Promise<SessionInfo[]> {
    const store = await this.connect();
    const rows = await store.listSessions(cwd === null ? {} : { cwd: resolveRecordedCwd(cwd) });
    return rows.map((row) => this.infoOf(row));
  }

  /** The database's redaction key for shared output (export, views): read, never created; null when none was made. */
  async sharingRedactionKey(): Promise<Uint8Array | null> {
    return (await this.connect()).readRedactionKey();
  }

  /** The database's redaction key, created when it has none (`redact --store`). */
  async redactionKey(): Promise<Uint8Array> {
    return (await this.connect()).redactionKey(randomBytes(32));
  }

  /** `rekey --store`: session `ref` (an id or prefix) re-encrypted in one transaction under its lease (pg-rekey.ts). */
  async rekeySession(ref: string, keys: { from: StoreKey; to: StoreKey }): Promise<PgRekeyReport> {
    const store = await this.connect();
    return rekeyPgSession(store, this.name, (await store.resolveSession(ref)).id, keys);
  }

  /** `redact --store`: session `id`'s rows scrubbed in one transaction under its lease (pg-redact.ts). */
  async redactSession(id: string, redactor: SecretRedactor, options: PgRedactOptions): Promise<PgRedactReport> {
    return redactPgSession(await this.connect(), this.name, id, redactor, options);
  }

  /** After `redact --store`: the sessions' search rows read anew from their redacted rows (search-index.ts). */
  async reindexSearch(ids: readonly string[]): Promise<void> {
    await reindexSearchSessions((await this.connect()).pool, ids);
  }

  /** The id of session `ref` (an id or prefix). */
  async sessionIdOf(ref: string): Promise<string> {
    return (await (await this.connect()).resolveSession(ref)).id;
  }

  /** `du`, `usage` and the `usage_ledger` table (pg-drivers.ts). */
  accounting(): AccountingDriver {
    return pgAccounting(() => this.connect());
  }

  /** `stats`, the blob half of `verify`, `rekey --store`, `redact --store` (pg-drivers.ts, pg-rekey.ts, pg-redact.ts). */
  maintenance(): MaintenanceDriver {
    return {
      stats: async () => pgStats(await this.connect()),
      verifyBlobs: async ({ rehash }) => pgVerifyBlobs(await this.connect(), rehash),
      rekeySession: (ref, keys) => this.rekeySession(ref, keys),
      redactSession: (id, redactor, options) => this.redactSession(id, redactor, options),
      sessionIdOf: (ref) => this.sessionIdOf(ref),
      redactionKey: () => this.redactionKey(),
      sharingRedactionKey: () => this.sharingRedactionKey(),
      reindexSearch: (ids) => this.reindexSearch(ids),
    };
  }

  /** Pins, archive and trash in the `session_lifecycle` table. */
  lifecycle(options: ResolvedSessionManagerOptions): LifecycleDriver {
    return new PgLifecycle(this, options);
  }

  async resolve(arg: string, cwd: string | undefined, _options: ResolvedSessionManagerOptions & DiscoveryOptions): Promise<SessionInfo> {
    const store = await this.connect();
    if (cwd === undefined) return this.infoOf(await store.resolveSession(arg));
    try {
      return this.infoOf(await store.resolveSession(arg, { cwd: resolveRecordedCwd(cwd) }));
    } catch (err) {
      if (!(err instanceof TranscriptStoreError) || err.code !== "SESSION_NOT_FOUND") throw err;
      return this.infoOf(await store.resolveSession(arg));
    }
  }

  async locate(id: string, _options: ResolvedSessionManagerOptions): Promise<string | null> {
    return (await (await this.connect()).getSession(id)) === null ? null : id;
  }

  async has(id: string, options: ResolvedSessionManagerOptions): Promise<boolean> {
    return (await this.locate(id, options)) !== null;
  }

  async exportSnapshot(ref: string, _options: ResolvedSessionManagerOptions): Promise<SessionSnapshot> {
    return exportPg(await this.connect(), this.name, ref);
  }

  async importSnapshot(snapshot: SessionSnapshot, options: ResolvedSessionManagerOptions): Promise<ImportOutcome> {
    return importPg(await this.connect(), this.name, snapshot, { holder: leaseHolder(), ttlMs: options.lockStaleMs });
  }

  async gc(_options: ResolvedSessionManagerOptions, gc: StoreGcOptions): Promise<StoreGcReport> {
    const report = await (await this.connect()).gc(gc);
    return { deleted: report.deleted, bytesFreed: report.bytes };
  }

  /** The store's search index, in the same database (pg-index.ts); a `migrate: "check"` store runs no DDL for it. */
  async index(_options: ResolvedSessionManagerOptions): Promise<SessionIndex> {
    const store = await this.connect();
    return PgSessionIndex.open(store.pool, { readOnly: this.storeOptions.migrate === "check", name: this.name });
  }

  /** Listing's view of a session row; `path` is the session id (what `open` takes). */
  private infoOf(row: PgSessionInfo): SessionInfo {
    return {
      path: row.id,
      id: row.id,
      cwd: row.cwd,
      title: row.sessionName ?? row.title, // as a file listing: the session name, else the header's title
      created: row.created,
      modified: row.modified,
      size: row.size,
      messageCount: row.messageCount,
      messageCountExact: true,
      // the stored preview may hold U+FFFD for what its column could not hold: the line has the exact text
      firstMessage: row.firstMessageLine === undefined ? row.firstMessage : (previewOfLine(row.firstMessageLine) ?? row.firstMessage),
      parentSession: row.parentSession,
      tornTail: false,
    };
  }

  /**
   * The session as the manager receives it: the blobs its rows reference are fetched (rehydration
   * reads synchronously) and eager entries get their images back; its artifacts are mirrored.
   */
  private async opened(
    store: PgStore,
    header: SessionHeader,
    stored: SessionEntry[],
    options: ResolvedSessionManagerOptions,
    state: OpenState,
  ): Promise<OpenedSession> {
    const location = `${this.name}#${header.id}`;
    const cache = new PgBlobCache(location);
    const lines = state.key === null ? null : pgCipher(header, state.key);
    const mirror = new PgArtifactMirror(store, header.id, {
      fsync: options.fsync,
      onWarning: options.onWarning,
      redactor: options.redactor,
      cipher: lines === null ? null : new ArtifactCipher(state.key!.key, header.id),
    });
    const warn = (w: StoreWarning) => options.onWarning({ ...w, path: w.path ?? location });
    if (state.refs !== undefined && state.refs.size > 0) await cache.fetch(store.blobs, state.refs);
    if (state.created) await mirror.load();
    // Only an entry whose line names a ref has anything to give back (as the file loader does).
    const withRefs = options.rehydrate === "eager" ? state.withRefs : undefined;
    const entries = withRefs === undefined ? stored : stored.map((e) => (withRefs.has(e) ? rehydrateValue(e, cache, warn) : e));
    return {
      header,
      entries,
      loadReport: emptyLoadReport(),
      storage: (hooks: StorageHooks) =>
        new PgSessionStorage(
          {
            store,
            blobs: blobsView(store.blobs),
            cache,
            options,
            sessionId: header.id,
            location,
            token: state.token,
            holder: state.holder,
            nextSeq: state.nextSeq,
            created: state.created,
            firstMessageKnown: state.firstMessageKnown,
            artifacts: mirror,
            cipher: state.key === null ? null : withKey(lines, state.key),
            forkInto: (request, source, copy) => this.fork(store, request, source, copy),
          },
          hooks,
        ),
    };
  }

  /**
   * A whole-session fork is a server-side copy (rows, refs, artifacts) of the rows memory shows,
   * followed by the rows it shows that the source could not store (`copy`); a branch is written from memory.
   */
  private async fork(store: PgStore, request: ForkRequest, source: PgSessionStorage, copy: ForkSource): Promise<OpenedSession> {
    const { header, entries, options } = request;
    await loadRedactionKey(store, options);
    const holder = leaseHolder();
    const lease = { holder, ttlMs: options.lockStaleMs };
    let session: PgSession;
    let token: number | null;
    // An encrypted source's rows are bound to its id: its fork is written from memory, sealed under the fork's id.
    const key = source.storeKey;
    const cipher = pgCipher(header, key);
    if (request.whole && source.isStored && cipher === null) {
      // The rows memory shows: those stored, copied server-side, then those the source could not
      // store (a lost lease), written in the same transaction.
      const unstored = copy.unstored;
      const lines = unstored.length > 0 ? [{ lines: unstored.map((p) => p.row), blobs: unstored.flatMap((p) => p.blobs) }] : undefined;
      ({ session, token } = await store.forkSession(source.sessionId, JSON.stringify(header), {
        lease,
        uptoSeq: copy.storedThroughSeq,
        lines,
      }));
    } else {
      // A branch: the source's artifacts and refs are copied server-side and its path written from
      // memory, in one transaction (a fork cut short leaves nothing, never an empty session).
      const rows = entries.map((entry, i) => {
        const prepared = prepareRow(entry, options.prepare, options.onWarning, cipher === null);
        return cipher === null ? prepared : { ...prepared, row: sealRow(prepared.row, cipher, i + 1) };
      });
      const blobs = withCachedBlobs(
        rows.map((r) => ({ row: r.row, blobs: r.blobs })),
        source,
      );
      const lines = [{ lines: rows.map((r) => r.row), blobs }];
      if (source.isStored) {
        // an encrypted source's artifacts are sealed under its id: the copies are sealed again under the fork's, in the fork's transaction
        const artifacts =
          cipher === null ? undefined : resealFor(new ArtifactCipher(key!.key, source.sessionId), new ArtifactCipher(key!.key, header.id));
        ({ session, token } = await store.forkSession(source.sessionId, JSON.stringify(header), { lease, uptoSeq: 0, lines, artifacts }));
      } else {
        ({ session, token } = await store.createSessionWithRows(JSON.stringify(header), lines, { lease }));
      }
    }
    const firstMessageKnown = session.firstMessage !== null;
    return this.opened(store, header, entries, options, {
      token,
      holder,
      nextSeq: session.lastSeq + 1,
      created: true,
      firstMessageKnown,
      key: cipher === null ? null : key,
    });
  }
}

/**
 * The database's redaction key into the options' key slot, before anything is prepared: every writer
 * of one database makes the same markers (unless a key was given explicitly). Created by the first
 * writer that needs it (redaction_key table).
 */
async function loadRedactionKey(store: PgStore, options: ResolvedSessionManagerOptions): Promise<void> {
  const slot = options.redactionKey;
  if (slot?.wantsStoreKey) slot.fromStore(await store.redactionKey(randomBytes(32)));
}

/**
 * The rewrite of a fork's copied artifacts: each sealed one opened under the source's cipher and sealed
 * under the fork's; one that does not open (tampered) is left as it is, as the file store's fork does
 * (reads of it stay DECRYPT_FAILED).
 */
function resealFor(from: ArtifactCipher, to: ArtifactCipher): ArtifactRewrite {
  return (name, bytes) => {
    try {
      return resealContent(name, bytes, from, to);
    } catch {
      return null;
    }
  };
}

/** A cipher with its key, or null for a plain session. */
function withKey(lines: LineCipher | null, key: StoreKey): { lines: LineCipher; key: StoreKey } | null {
  return lines === null ? null : { lines, key };
}

/**
 * The blobs rows carry, plus the bytes the source holds of the other blobs they reference: a lazy
 * entry keeps refs, and the blobs of entries its source could not store (a lost lease) exist only
 * in that process's cache, not in the database.
 */
function withCachedBlobs(rows: ReadonlyArray<{ row: PgLine; blobs: PgBlobWrite[] }>, source: PgSessionStorage): PgBlobWrite[] {
  const blobs = rows.flatMap((r) => r.blobs);
  const have = new Set(blobs.map((b) => b.sha256));
  for (const hash of rows.flatMap((r) => r.row.blobRefs ?? [])) {
    const bytes = have.has(hash) ? null : source.cachedBlob(hash);
    if (bytes !== null) {
      blobs.push({ sha256: hash, bytes });
      have.add(hash);
    }
  }
  return blobs;
}
