// The reads `bench/postgres/fleet.ts` times at each fleet size: each through the library and as the
// raw SQL that does the same reads on the same server (the baseline of its ratio).
import type pg from "pg";
import type { PgStore } from "../../src/storage/postgres/db/index.ts";
import { compileQuery, parseQuery, SEARCH_SQL, searchParams } from "../../src/storage/postgres/db/search-query.ts";
import type { SessionIndex } from "../../src/search/session-index.ts";
import { resolveSearchOptions } from "../../src/storage/postgres/pg-index.ts";
import { readThroughCursor } from "./cursor-read.ts";
import { fleetCwd, fleetId, fleetToken } from "./fleet-seed.ts";

/** One operation: the library's call and the raw baseline, each returning something checked non-empty. */
export interface FleetOp {
  name: string;
  ours: () => Promise<number>;
  raw: () => Promise<number>;
}

/** The session every size opens, forks and searches for (it exists from 1,000 sessions on). */
export const PROBE = 500;
/** Rows a "first page" listing asks for. */
export const PAGE = 50;

/** The listing's columns, with the session name's line (the latest `session_info` entry) that a listing shows too. */
const LIST_COLUMNS = `id, cwd, title, created, modified, parent_session, first_message, message_count, last_seq,
  (SELECT e.line FROM entries e WHERE e.session_id = sessions.id AND e.kind = 'session_info' ORDER BY e.seq DESC LIMIT 1) AS name_line`;
const header = (id: string) =>
  JSON.stringify({ type: "session", version: 3, id, timestamp: new Date().toISOString(), cwd: "/fleet/forks" });

let forks = 0;

/** The operations over `store` (and `index`, opened through openSessionIndex({ store })) against `raw`. */
export function fleetOps(store: PgStore, raw: pg.Pool, index: SessionIndex): FleetOp[] {
  const probe = fleetId(PROBE);
  const cwd = fleetCwd(PROBE);
  const withClient = async <T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await raw.connect();
    try {
      return await fn(client);
    } finally {
      client.release();
    }
  };
  const rawSearch = async (query: string) => {
    const tsquery = await compileQuery(raw, parseQuery(query));
    return (await raw.query(SEARCH_SQL, searchParams(tsquery, resolveSearchOptions({ limit: 20 })))).rows.length;
  };
  const dropFork = (id: string) => raw.query("DELETE FROM sessions WHERE id = $1", [id]);
  return [
    {
      name: "open a session (all entries)",
      ours: async () => {
        let n = 0;
        await store.readSession(probe, (batch) => {
          n += batch.length;
        });
        return n;
      },
      // the same reads: the header, then the entries through a cursor, in one transaction
      raw: () =>
        withClient(async (c) => {
          await c.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
          const { rows } = await c.query("SELECT header FROM sessions WHERE id = $1", [probe]);
          const chars = await readThroughCursor(c, "SELECT line FROM entries WHERE session_id = $1 ORDER BY seq", [probe], false);
          await c.query("COMMIT");
          return rows.length === 0 ? 0 : chars;
        }),
    },
    {
      name: `list one cwd (${100} sessions)`,
      ours: async () => (await store.listSessions({ cwd })).length,
      raw: async () =>
        (
          await raw.query(`SELECT ${LIST_COLUMNS} FROM sessions WHERE md5(cwd) = md5($1) AND cwd = $1 ORDER BY modified DESC, id DESC`, [
            cwd,
          ])
        ).rows.length,
    },
    {
      name: `list all, first ${PAGE}`,
      ours: async () => (await store.listSessions({ limit: PAGE })).length,
      raw: async () => (await raw.query(`SELECT ${LIST_COLUMNS} FROM sessions ORDER BY modified DESC, id DESC LIMIT ${PAGE}`)).rows.length,
    },
    {
      name: "list all",
      ours: async () => (await store.listSessions()).length,
      raw: async () => (await raw.query(`SELECT ${LIST_COLUMNS} FROM sessions ORDER BY modified DESC, id DESC`)).rows.length,
    },
    {
      name: "resolve an id prefix (8 chars)",
      ours: async () => ((await store.resolveSession(probe.slice(0, 8))).id === probe ? 1 : 0),
      raw: async () => (await raw.query("SELECT id FROM sessions WHERE id LIKE $1 || '%' LIMIT 2", [probe.slice(0, 8)])).rows.length,
    },
    {
      name: "fork a session",
      ours: async () => {
        const id = `fleet-fork-${++forks}`;
        const { session } = await store.forkSession(probe, header(id));
        await dropFork(id);
        return session.lastSeq;
      },
      raw: async () => {
        const id = `fleet-fork-${++forks}`;
        const n = await withClient(async (c) => {
          await c.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
          await c.query(
            `INSERT INTO sessions (id, cwd, created, header, first_message, first_message_seq, message_count, last_seq, body_bytes)
             SELECT $2, '/fleet/forks', now(), $3, first_message, first_message_seq, message_count, last_seq, body_bytes
               FROM sessions WHERE id = $1`,
            [probe, id, header(id)],
          );
          const copied = await c.query("INSERT INTO entries SELECT $2, seq, entry_id, kind, line FROM entries WHERE session_id = $1", [
            probe,
            id,
          ]);
          await c.query("INSERT INTO blob_refs SELECT $2, sha256 FROM blob_refs WHERE session_id = $1", [probe, id]);
          await c.query("COMMIT");
          return copied.rowCount ?? 0;
        });
        await dropFork(id);
        return n;
      },
    },
    {
      name: "gc, dry run",
      ours: async () => (await store.gc({ dryRun: true })).deleted.length,
      raw: async () =>
        (
          await raw.query(
            `SELECT b.sha256, b.size FROM blobs b
              WHERE b.touched < now() - interval '1 hour' AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.sha256 = b.sha256)
              ORDER BY b.sha256`,
          )
        ).rows.length,
    },
    {
      name: "search one session's word",
      ours: async () => (await index.search(fleetToken(PROBE))).length,
      raw: () => rawSearch(fleetToken(PROBE)),
    },
    {
      name: "search a word of every session (top 20)",
      ours: async () => (await index.search("assertion")).length,
      raw: () => rawSearch("assertion"),
    },
  ];
}
