import type { Pool, PoolClient } from "pg";
import { TranscriptStoreError } from "../errors.ts";
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

/** An artifact with its content. */
export interface PgArtifact extends PgArtifactInfo {
  content: Buffer;
}

const ID_RE = /^[A-Za-z0-9._-]{1,200}$/;

function checkId(id: string): void {
  if (!ID_RE.test(id) || id === "." || id === "..") {
    throw new TranscriptStoreError("INVALID_ARTIFACT_ID", `Invalid artifact id ${JSON.stringify(id.slice(0, 100))}`);
  }
}

/** Artifacts as rows of their session (`artifacts`): deleted with it, copied by `forkSession`, untouched by a move. */
export class PgArtifacts {
  constructor(private readonly pool: Pool) {}

  /**
   * Runs `fn` as one statement, or, given the writer's lease `token`, in a transaction fenced like
   * an append (`SESSION_LOCKED`, nothing written, when the lease was taken over).
   */
  private write<T>(doing: string, sessionId: string, token: number | undefined, fn: (client: PoolClient) => Promise<T>): Promise<T> {
    if (token === undefined) return withClient(this.pool, doing, fn);
    return withTransaction(this.pool, doing, async (client) => {
      await fenceSession(client, sessionId, token, doing);
      return fn(client);
    });
  }

  /**
   * Stores (or replaces) artifact `id` of the session; `SESSION_NOT_FOUND` when the session does not
   * exist. A session's writer passes its lease `token`: then it is fenced like an append.
   */
  async put(
    sessionId: string,
    id: string,
    content: Uint8Array | string,
    meta: Record<string, unknown> = {},
    token?: number,
  ): Promise<void> {
    checkId(id);
    const bytes =
      typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content.buffer, content.byteOffset, content.byteLength);
    try {
      await this.write("Storing an artifact", sessionId, token, (client) =>
        client.query(
          `INSERT INTO artifacts (session_id, id, meta, content) VALUES ($1, $2, $3, $4)
           ON CONFLICT (session_id, id) DO UPDATE SET meta = EXCLUDED.meta, content = EXCLUDED.content`,
          [sessionId, id, JSON.stringify(meta), bytes],
        ),
      );
    } catch (err) {
      if (isForeignKeyViolation(err)) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session ${sessionId} for an artifact`);
      throw err;
    }
  }

  /** The artifact, or null when the session has none by that id. */
  async get(sessionId: string, id: string): Promise<PgArtifact | null> {
    checkId(id);
    const { rows } = await withClient(this.pool, "Reading an artifact", (client) =>
      client.query<{ id: string; meta: Record<string, unknown>; content: Buffer; created: Date }>(
        "SELECT id, meta, content, created FROM artifacts WHERE session_id = $1 AND id = $2",
        [sessionId, id],
      ),
    );
    const row = rows[0];
    return row === undefined ? null : { id: row.id, size: row.content.length, meta: row.meta, created: row.created, content: row.content };
  }

  /** The session's artifacts by id, without content. */
  async list(sessionId: string): Promise<PgArtifactInfo[]> {
    const { rows } = await withClient(this.pool, "Listing artifacts", (client) =>
      client.query<{ id: string; meta: Record<string, unknown>; size: number; created: Date }>(
        "SELECT id, meta, octet_length(content)::float8 AS size, created FROM artifacts WHERE session_id = $1 ORDER BY id",
        [sessionId],
      ),
    );
    return rows.map((r) => ({ id: r.id, meta: r.meta, size: r.size, created: r.created }));
  }

  /** Deletes the artifact; false when there was none. Fenced like `put` when given the lease `token`. */
  async delete(sessionId: string, id: string, token?: number): Promise<boolean> {
    checkId(id);
    const { rowCount } = await this.write("Deleting an artifact", sessionId, token, (client) =>
      client.query("DELETE FROM artifacts WHERE session_id = $1 AND id = $2", [sessionId, id]),
    );
    return rowCount === 1;
  }
}
