import type { Pool, PoolClient } from "./pg-client.ts";
import { TranscriptStoreError } from "../../../errors.ts";
import { type ArtifactRewrite, PgArtifacts, resolveChunkBytes } from "./artifacts.ts";
import { PgBlobs } from "./blobs.ts";
import { collectBlobs, type PgGcOptions, type PgGcReport } from "./gc.ts";
import { PgLeases } from "./lease.ts";
import { type PgLimits, resolveLimits } from "./limits.ts";
import { checkSchema, checkSchemaName, migrateSchema } from "./schema.ts";
import { deleteSession, forkSession, moveSession, type PgForkOptions } from "./session-copies.ts";
import { createSessionWithRows, importSession, type PgImportBatch, type PgImportResult, type PgImportSource } from "./session-import.ts";
import {
  getSession,
  listSessions,
  loadSession,
  type PgListOptions,
  type PgReadOptions,
  readSession,
  resolveSession,
} from "./session-reads.ts";
import { appendBatch, createSession, rewriteSession } from "./session-writes.ts";
import { ensureRedactionKey, readRedactionKey } from "./redaction-key.ts";
import type { PgAppendResult, PgBlobWrite, PgEntry, PgLeaseRequest, PgLine, PgSession, PgSessionInfo } from "./types.ts";

/** Options of `PgStore.connect`. */
export interface PgStoreOptions {
  /** Connections in the pool the store creates from a URL. @default 10 */
  maxConnections?: number;
  /**
   * On connect: `true` creates or migrates the schema; `"check"` changes nothing (no DDL) and fails
   * with SCHEMA_MISMATCH unless the database holds this library's schema version (read-only use);
   * `false` neither migrates nor checks. @default true
   */
  migrate?: boolean | "check";
  /**
   * The PostgreSQL schema (namespace) the tables live in, so they never meet an application's own
   * `sessions` table: set as `search_path` on every connection of the pool the store creates, and
   * created if absent when migrating. Also `?schema=` in the URL. Lowercase letters, digits and `_`.
   * Not with a pool you pass: set `search_path` on your pool's connections yourself.
   * @default the server's search_path (normally `public`)
   */
  schema?: string;
  /**
   * Bytes per stored artifact chunk (`artifact_chunks` row): content goes in and out one chunk at
   * a time. 1 to 64 MiB. @default 1048576 (DEFAULT_ARTIFACT_CHUNK_BYTES)
   */
  artifactChunkBytes?: number;
  /** Sizes of statements and values (limits.ts); smaller ones only, for tests. @default DEFAULT_LIMITS */
  limits?: Partial<PgLimits>;
}

/** `url` without its `schema` query parameter, and that parameter's value (the driver would not know it). */
function splitSchemaParam(url: string): { url: string; schema: string | undefined } {
  const q = url.indexOf("?");
  if (q < 0) return { url, schema: undefined };
  let schema: string | undefined;
  const kept = url
    .slice(q + 1)
    .split("&")
    .filter((pair) => {
      if (!pair.startsWith("schema=")) return true;
      schema = decodeURIComponent(pair.slice("schema=".length));
      return false;
    });
  return { url: kept.length > 0 ? `${url.slice(0, q)}?${kept.join("&")}` : url.slice(0, q), schema };
}

/**
 * Sessions, entries, blobs and artifacts in one PostgreSQL database (docs/postgres.md). Every
 * method is async and resolves once its transaction committed; every failure is a
 * `TranscriptStoreError` (`PERSISTENCE_FAILED` with the cause for a lost connection or a failed
 * commit). Connections come from a pool: after a server restart the next call connects anew.
 */
export class PgStore {
  readonly leases: PgLeases;
  readonly blobs: PgBlobs;
  readonly artifacts: PgArtifacts;

  private constructor(
    readonly pool: Pool,
    private readonly ownsPool: boolean,
    /** The sizes every statement and value is kept within. */
    readonly limits: PgLimits,
    artifactChunkBytes: number,
  ) {
    this.leases = new PgLeases(pool);
    this.blobs = new PgBlobs(pool, limits);
    this.artifacts = new PgArtifacts(pool, artifactChunkBytes);
  }

  /**
   * Connects to `target` (a `postgres://` URL, or a `pg.Pool` you created and share) and creates or
   * migrates the schema (idempotent; safe with other processes migrating at once). A pool you pass
   * needs your own `error` listeners (on the pool, and on each client from its `connect` event),
   * as node-postgres requires, to survive a server restart.
   */
  static async connect(target: string | Pool, options: PgStoreOptions = {}): Promise<PgStore> {
    const owns = typeof target === "string";
    const limits = resolveLimits(options.limits);
    const chunkBytes = resolveChunkBytes(options.artifactChunkBytes);
    let pool: Pool;
    let schema: string | undefined;
    if (typeof target === "string") {
      if (!/^postgres(ql)?:\/\//.test(target)) {
        throw new TranscriptStoreError("INVALID_OPTION", "A PostgreSQL store URL starts with postgres:// or postgresql://");
      }
      const split = splitSchemaParam(target);
      if (options.schema !== undefined && split.schema !== undefined && options.schema !== split.schema) {
        throw new TranscriptStoreError("INVALID_OPTION", "the schema option and the URL's ?schema= name different schemas");
      }
      schema = options.schema ?? split.schema;
      if (schema !== undefined) checkSchemaName(schema);
      // the driver loads here, on the first connect, so that importing the library never loads it
      const { default: pg } = await import("pg");
      pool = new pg.Pool({
        connectionString: split.url,
        max: options.maxConnections ?? 10,
        // a checked name needs no escaping in the startup options; every connection of the pool gets it
        ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
      });
      // an idle connection cut by a server restart reports here; the pool drops it and the next call reconnects
      pool.on("error", () => {});
      // A connection can be cut in the very chunk that finished its startup (a server going down):
      // the pool hands it out with no error listener of its own, so without this one the `error`
      // event would crash the process. The client is then unqueryable; its next call fails and
      // it is destroyed on release.
      pool.on("connect", (client) => client.on("error", () => {}));
    } else {
      if (options.schema !== undefined) {
        throw new TranscriptStoreError(
          "INVALID_OPTION",
          "the schema option applies to a store created from a URL; set search_path on your own pool's connections",
        );
      }
      pool = target;
    }
    const store = new PgStore(pool, owns, limits, chunkBytes);
    try {
      const migrate = options.migrate ?? true;
      if (migrate === "check") await checkSchema(pool);
      else if (migrate) await migrateSchema(pool, undefined, schema);
    } catch (err) {
      await store.close();
      throw err;
    }
    return store;
  }

  /** Ends the pool when the store created it (a pool you passed stays yours). */
  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }

  /** Creates a session from its header line, optionally with its lease (`token`). */
  createSession(header: string, options: { lease?: PgLeaseRequest } = {}): Promise<{ session: PgSession; token: number | null }> {
    return createSession(this.pool, header, options.lease);
  }

  /** Creates a session with its first rows in one transaction (see `createSessionWithRows` in session-import.ts). */
  createSessionWithRows(
    header: string,
    lines: Iterable<PgImportBatch>,
    options: { lease?: PgLeaseRequest } = {},
  ): Promise<{ session: PgSession; token: number | null }> {
    return createSessionWithRows(this.pool, this.limits, header, lines, options.lease);
  }

  /** Appends a batch in one fenced transaction (see `appendBatch` in session-writes.ts). */
  appendBatch(
    sessionId: string,
    token: number,
    firstSeq: number,
    lines: readonly PgLine[],
    blobs: readonly PgBlobWrite[] = [],
  ): Promise<PgAppendResult> {
    return appendBatch(this.pool, this.limits, sessionId, token, firstSeq, lines, blobs);
  }

  /**
   * Replaces the header and all entries atomically under the lease; `artifacts` rewrites the contents
   * of the session's artifacts in the same transaction (`PgArtifacts.rewriteContentsIn`).
   */
  rewriteSession(
    sessionId: string,
    token: number,
    header: string,
    lines: readonly PgLine[],
    blobs: readonly PgBlobWrite[] = [],
    artifacts?: ArtifactRewrite,
  ): Promise<PgSession> {
    const alsoIn =
      artifacts === undefined
        ? undefined
        : async (client: PoolClient) => {
            await this.artifacts.rewriteContentsIn(client, sessionId, artifacts);
          };
    return rewriteSession(this.pool, this.limits, sessionId, token, header, lines, blobs, alsoIn);
  }

  /** The database's redaction key, `candidate` (32 bytes) stored as it when it has none yet (redaction-key.ts). */
  redactionKey(candidate: Uint8Array): Promise<Buffer> {
    return ensureRedactionKey(this.pool, candidate);
  }

  /** The database's redaction key, or null when none was made yet. */
  readRedactionKey(): Promise<Buffer | null> {
    return readRedactionKey(this.pool);
  }

  /** The session row with its header, or null. */
  getSession(sessionId: string): Promise<PgSession | null> {
    return getSession(this.pool, sessionId);
  }

  /** Streams entries in seq order, a batch at a time, from one snapshot; resolves to the session row. */
  readSession(sessionId: string, onBatch: (entries: PgEntry[]) => void | Promise<void>, options?: PgReadOptions): Promise<PgSession> {
    return readSession(this.pool, sessionId, onBatch, options);
  }

  /** Header and every entry in memory. */
  loadSession(sessionId: string): Promise<{ session: PgSession; entries: PgEntry[] }> {
    return loadSession(this.pool, sessionId);
  }

  /** Sessions newest first, of one cwd or all. */
  listSessions(options?: PgListOptions): Promise<PgSessionInfo[]> {
    return listSessions(this.pool, options);
  }

  /** The one session matching an id or id prefix. */
  resolveSession(idOrPrefix: string, options?: { cwd?: string }): Promise<PgSessionInfo> {
    return resolveSession(this.pool, idOrPrefix, options);
  }

  /** Server-side copy into a new session named by `header`. */
  forkSession(sourceId: string, header: string, options?: PgForkOptions): Promise<{ session: PgSession; token: number | null }> {
    const rewrite = options?.artifacts;
    const alsoIn =
      rewrite === undefined
        ? undefined
        : async (client: PoolClient, forkId: string) => {
            await this.artifacts.rewriteContentsIn(client, forkId, rewrite);
          };
    return forkSession(this.pool, this.limits, sourceId, header, options, alsoIn);
  }

  /**
   * Writes a session read elsewhere in one transaction (`token` null: a new session; else a fenced
   * re-import under its lease): all or nothing (see `importSession` in session-import.ts).
   */
  importSession(source: PgImportSource, token: number | null): Promise<PgImportResult> {
    return importSession(this.pool, this.limits, source, token);
  }

  /** Changes the session's cwd (its new header line) in one transaction under the lease. */
  moveSession(sessionId: string, token: number, header: string): Promise<PgSession> {
    return moveSession(this.pool, sessionId, token, header);
  }

  /** Deletes the session and its rows under the lease. */
  deleteSession(sessionId: string, token: number): Promise<void> {
    return deleteSession(this.pool, sessionId, token);
  }

  /** Transactional mark-and-sweep of unreferenced blobs older than the grace period. */
  gc(options?: PgGcOptions): Promise<PgGcReport> {
    return collectBlobs(this.pool, options);
  }
}
