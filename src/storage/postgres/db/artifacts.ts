import { constants as bufferConstants } from "node:buffer";
import type { Pool, PoolClient } from "./pg-client.ts";
import { TranscriptStoreError } from "../../../errors.ts";
import { fenceSession } from "./lease.ts";
import { isForeignKeyViolation } from "./pg-errors.ts";
import { withClient, withTransaction } from "./transaction.ts";

/** An artifact as listed (without its content). */
export interface PgArtifactInfo {
  id: string;
  size: number;
  meta: Record<string, unknown>;
  created: Date;
}

/** An artifact as `list` returns it: `damaged` when its chunks do not add up to its size (`read` refuses it). */
export interface PgArtifactListing extends PgArtifactInfo {
  damaged: boolean;
}

/** An artifact with its content. */
export interface PgArtifact extends PgArtifactInfo {
  content: Buffer;
}

/** What `put` stores: the bytes at once, or chunks of any size as they come (never held whole). */
export type PgArtifactContent = Uint8Array | string | Iterable<Uint8Array> | AsyncIterable<Uint8Array>;

/** New content for artifact `id` given its stored content, or null to leave it (`PgArtifacts.rewriteContentsIn`). */
export type ArtifactRewrite = (id: string, content: Buffer) => Buffer | null;

/**
 * Bytes per `artifact_chunks` row. pg hands a bytea value to V8 as one hex string (2 × size + 2
 * characters), so a value must stay far below V8's longest string (0x1fffffe8 characters, i.e.
 * ~256 MiB of bytea) and PostgreSQL's 1 GB field: an artifact of any size is many such rows.
 */
export const DEFAULT_ARTIFACT_CHUNK_BYTES = 1024 * 1024;
/** The largest chunk size accepted (its hex text is 128 Mi characters, a quarter of V8's limit). */
export const MAX_ARTIFACT_CHUNK_BYTES = 64 * 1024 * 1024;

/** Longest id: one file name on common file systems (the working directory holds it as one). */
const MAX_ID_BYTES = 255;
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * True for a name the `artifacts` table can hold and a directory can hold back as one file:
 * 1–255 UTF-8 bytes, no `/` or NUL, not `.` or `..`, well-formed Unicode.
 */
export function isStorableArtifactId(id: unknown): id is string {
  return (
    typeof id === "string" &&
    id.length > 0 &&
    Buffer.byteLength(id, "utf8") <= MAX_ID_BYTES &&
    !id.includes("/") &&
    !id.includes("\0") &&
    id !== "." &&
    id !== ".." &&
    !LONE_SURROGATE.test(id)
  );
}

function checkId(id: string): void {
  if (!isStorableArtifactId(id)) {
    throw new TranscriptStoreError("INVALID_ARTIFACT_ID", `Invalid artifact id ${JSON.stringify(String(id).slice(0, 100))}`);
  }
}

/** Validates the `artifactChunkBytes` option once (INVALID_OPTION). */
export function resolveChunkBytes(value: number | undefined): number {
  if (value === undefined) return DEFAULT_ARTIFACT_CHUNK_BYTES;
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_ARTIFACT_CHUNK_BYTES) {
    throw new TranscriptStoreError("INVALID_OPTION", `artifactChunkBytes must be an integer from 1 to ${MAX_ARTIFACT_CHUNK_BYTES}`);
  }
  return value;
}

/** The pieces of `content`, as they come. */
async function* piecesOf(content: PgArtifactContent): AsyncIterable<Uint8Array> {
  if (typeof content === "string") yield Buffer.from(content, "utf8");
  else if (content instanceof Uint8Array) yield content;
  else yield* content;
}

/** Re-cuts a stream of pieces into chunks of exactly `size` bytes (the last may be shorter), copying nothing whole. */
async function* rechunk(pieces: AsyncIterable<Uint8Array>, size: number): AsyncIterable<Buffer> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  for await (const piece of pieces) {
    let rest = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    while (heldBytes + rest.length >= size) {
      const take = size - heldBytes;
      held.push(rest.subarray(0, take));
      yield held.length === 1 ? Buffer.from(held[0]!) : Buffer.concat(held, size);
      rest = rest.subarray(take);
      held = [];
      heldBytes = 0;
    }
    if (rest.length > 0) {
      // copied: the caller may reuse its buffer for the next piece
      held.push(Buffer.from(rest));
      heldBytes += rest.length;
    }
  }
  if (heldBytes > 0) yield Buffer.concat(held, heldBytes);
}

/**
 * Artifacts as rows of their session: `artifacts` (id, meta, size) and its content in
 * `artifact_chunks` (≤ `artifactChunkBytes` each, in order). Deleted with the session, copied by
 * `forkSession`, untouched by a move. Content travels chunk by chunk both ways, so no artifact
 * is ever one value on the wire or one string or buffer in this process (`get` excepted).
 */
export class PgArtifacts {
  constructor(
    private readonly pool: Pool,
    private readonly chunkBytes: number = DEFAULT_ARTIFACT_CHUNK_BYTES,
  ) {}

  /**
   * Stores (or replaces) artifact `id` of the session in one transaction: readers see the old
   * content or the new, never part. `SESSION_NOT_FOUND` when the session does not exist. A
   * session's writer passes its lease `token`: then it is fenced like an append (`SESSION_LOCKED`,
   * nothing written, when the lease was taken over). Returns the bytes stored.
   */
  async put(
    sessionId: string,
    id: string,
    content: PgArtifactContent,
    meta: Record<string, unknown> = {},
    token?: number,
  ): Promise<number> {
    checkId(id);
    try {
      return await withTransaction(this.pool, "Storing an artifact", async (client) => {
        if (token !== undefined) await fenceSession(client, sessionId, token, "Storing an artifact");
        await client.query(
          `INSERT INTO artifacts (session_id, id, meta, size) VALUES ($1, $2, $3, 0)
           ON CONFLICT (session_id, id) DO UPDATE SET meta = EXCLUDED.meta, size = 0`,
          [sessionId, id, JSON.stringify(meta)],
        );
        return this.writeContent(client, sessionId, id, content);
      });
    } catch (err) {
      if (isForeignKeyViolation(err)) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session ${sessionId} for an artifact`);
      throw err;
    }
  }

  /**
   * Rewrites the content of the session's artifacts through `fn` inside the caller's transaction (a
   * rekey or fork re-sealing them with its rows): each artifact whose chunks add up is read whole, one
   * at a time, and replaced by what `fn` returns (null: left as it is; meta and creation time kept).
   * A damaged artifact is left as it is. An error of `fn` aborts the caller's transaction. Returns
   * how many were replaced.
   */
  async rewriteContentsIn(client: PoolClient, sessionId: string, fn: ArtifactRewrite): Promise<number> {
    const { rows } = await client.query<{ id: string; size: number }>(
      "SELECT id, size::float8 AS size FROM artifacts WHERE session_id = $1 ORDER BY id FOR UPDATE",
      [sessionId],
    );
    let replaced = 0;
    for (const { id, size } of rows) {
      const { rows: chunks } = await client.query<{ n: number; bytes: Buffer }>(
        "SELECT n, bytes FROM artifact_chunks WHERE session_id = $1 AND id = $2 ORDER BY n",
        [sessionId, id],
      );
      const content = Buffer.concat(chunks.map((c) => c.bytes));
      if (content.length !== size || chunks.some((c, i) => c.n !== i)) continue; // damaged: left as it is
      const next = fn(id, content);
      if (next === null) continue;
      await this.writeContent(client, sessionId, id, next);
      replaced++;
    }
    return replaced;
  }

  /** Writes `content` as the chunk rows of artifact `id` (its row exists) and records its size. */
  private async writeContent(client: PoolClient, sessionId: string, id: string, content: PgArtifactContent): Promise<number> {
    await client.query("DELETE FROM artifact_chunks WHERE session_id = $1 AND id = $2", [sessionId, id]);
    let n = 0;
    let size = 0;
    for await (const chunk of rechunk(piecesOf(content), this.chunkBytes)) {
      await client.query("INSERT INTO artifact_chunks (session_id, id, n, bytes) VALUES ($1, $2, $3, $4)", [sessionId, id, n++, chunk]);
      size += chunk.length;
    }
    await client.query("UPDATE artifacts SET size = $3 WHERE session_id = $1 AND id = $2", [sessionId, id, size]);
    return size;
  }

  /**
   * Streams the artifact's content to `onChunk`, chunk by chunk in order, from one snapshot, and
   * returns its info; null when the session has none by that id. Stored chunks that do not add up
   * to the recorded size (a damaged row) are `PERSISTENCE_FAILED` before any byte is delivered.
   */
  async read(sessionId: string, id: string, onChunk: (chunk: Buffer) => void | Promise<void>): Promise<PgArtifactInfo | null> {
    checkId(id);
    return withTransaction(
      this.pool,
      "Reading an artifact",
      async (client) => {
        await client.query("SET TRANSACTION READ ONLY");
        const info = await infoOf(client, sessionId, id);
        if (info === null) return null;
        const { rows } = await client.query<{ count: number; total: number; last: number }>(
          `SELECT count(*)::float8 AS count, coalesce(sum(octet_length(bytes)), 0)::float8 AS total, coalesce(max(n), -1)::float8 AS last
             FROM artifact_chunks WHERE session_id = $1 AND id = $2`,
          [sessionId, id],
        );
        const { count, total, last } = rows[0]!;
        if (total !== info.size || last !== count - 1) {
          throw new TranscriptStoreError(
            "PERSISTENCE_FAILED",
            `Artifact ${id} of session ${sessionId} is damaged: ${count} chunks of ${total} bytes stored for ${info.size}`,
          );
        }
        for (let n = 0; n < count; n++) {
          // one chunk per round trip: memory holds one chunk and its hex text (pg reads bytea as text;
          // its binary result format decodes values as UTF-8 and corrupts them), never the whole
          const res = await client.query<{ bytes: Buffer }>(
            "SELECT bytes FROM artifact_chunks WHERE session_id = $1 AND id = $2 AND n = $3",
            [sessionId, id, n],
          );
          await onChunk(res.rows[0]!.bytes);
        }
        return info;
      },
      "REPEATABLE READ",
    );
  }

  /**
   * The artifact with its content in one buffer, or null. Content larger than one buffer can be is
   * `PERSISTENCE_FAILED` (use `read`, which streams).
   */
  async get(sessionId: string, id: string): Promise<PgArtifact | null> {
    const chunks: Buffer[] = [];
    let total = 0;
    const info = await this.read(sessionId, id, (chunk) => {
      total += chunk.length;
      if (total > bufferConstants.MAX_LENGTH) {
        throw new TranscriptStoreError("PERSISTENCE_FAILED", `Artifact ${id} is larger than one buffer can be; read it in chunks`);
      }
      chunks.push(chunk);
    });
    if (info === null) return null;
    return { ...info, content: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total) };
  }

  /** The session's artifacts by id, without content; each says whether its chunks are whole. */
  async list(sessionId: string): Promise<PgArtifactListing[]> {
    const { rows } = await withClient(this.pool, "Listing artifacts", (client) =>
      client.query<{ id: string; meta: Record<string, unknown>; size: number; created: Date; damaged: boolean }>(
        `SELECT a.id, a.meta, a.size::float8 AS size, a.created,
                (coalesce(c.total, 0) <> a.size OR coalesce(c.last, -1) <> coalesce(c.count, 0) - 1) AS damaged
           FROM artifacts a
           LEFT JOIN (SELECT id, sum(octet_length(bytes)) AS total, max(n) AS last, count(*) AS count
                        FROM artifact_chunks WHERE session_id = $1 GROUP BY id) c ON c.id = a.id
          WHERE a.session_id = $1 ORDER BY a.id`,
        [sessionId],
      ),
    );
    return rows.map((r) => ({ id: r.id, meta: r.meta, size: r.size, created: r.created, damaged: r.damaged }));
  }

  /** Deletes the artifact and its chunks; false when there was none. Fenced like `put` when given the lease `token`. */
  async delete(sessionId: string, id: string, token?: number): Promise<boolean> {
    checkId(id);
    const { rowCount } = await withTransaction(this.pool, "Deleting an artifact", async (client) => {
      if (token !== undefined) await fenceSession(client, sessionId, token, "Deleting an artifact");
      return client.query("DELETE FROM artifacts WHERE session_id = $1 AND id = $2", [sessionId, id]);
    });
    return rowCount === 1;
  }
}

async function infoOf(client: PoolClient, sessionId: string, id: string): Promise<PgArtifactInfo | null> {
  const { rows } = await client.query<{ id: string; meta: Record<string, unknown>; size: number; created: Date }>(
    "SELECT id, meta, size::float8 AS size, created FROM artifacts WHERE session_id = $1 AND id = $2",
    [sessionId, id],
  );
  return rows[0] ?? null;
}

/** Copies every artifact of `fromId` (rows and chunks) to `toId`, server-side, inside the caller's transaction. */
export async function copyArtifacts(client: PoolClient, fromId: string, toId: string): Promise<void> {
  await client.query(
    `INSERT INTO artifacts (session_id, id, meta, size, created)
     SELECT $2, id, meta, size, created FROM artifacts WHERE session_id = $1`,
    [fromId, toId],
  );
  await client.query(
    `INSERT INTO artifact_chunks (session_id, id, n, bytes)
     SELECT $2, id, n, bytes FROM artifact_chunks WHERE session_id = $1`,
    [fromId, toId],
  );
}
