import pg from "pg";
import { SessionManager } from "../../src/session/session-manager.ts";
import { PostgresBackend } from "../../src/storage/postgres/pg-backend.ts";
import { appendMessages } from "../helpers/pg-append.ts";
import { scratchDatabase } from "../helpers/pg-cluster.ts";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";

/** The baseline: a new session row and an `INSERT … SELECT` of the source's entry rows, one transaction. */
async function rawFork(client: pg.Client, sourceId: string, id: string): Promise<void> {
  await client.query("BEGIN");
  try {
    const header = JSON.stringify({ type: "session", version: 3, id, timestamp: new Date().toISOString(), cwd: "/bench/raw" });
    await client.query("INSERT INTO sessions (id, cwd, created, header, parent_session) VALUES ($1, '/bench/raw', now(), $2, $3)", [
      id,
      header,
      sourceId,
    ]);
    await client.query(
      `INSERT INTO entries (session_id, seq, entry_id, kind, line)
       SELECT $2, seq, entry_id, kind, line FROM entries WHERE session_id = $1`,
      [sourceId, id],
    );
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK");
    throw err;
  }
}

/** `fork()` of a 10 MB session over PostgreSQL (server-side copy) against a raw `INSERT … SELECT` of its rows. */
export async function benchPgFork(ctx: BenchContext): Promise<BenchRow[]> {
  const messages = ctx.quick ? 1000 : 5000;
  const db = await scratchDatabase(ctx.pgUrl!);
  const backend = PostgresBackend.of(db.url);
  const client = new pg.Client({ connectionString: db.url });
  try {
    const source = await SessionManager.create("/bench/pg-fork", { store: backend });
    for (const message of appendMessages(messages, 9)) source.appendMessage(message);
    await source.flush();
    await client.connect();
    await client.query("VACUUM ANALYZE");
    const { rows } = await client.query<{ bytes: string }>("SELECT sum(octet_length(line)) AS bytes FROM entries WHERE session_id = $1", [
      source.sessionId,
    ]);
    const mb = Number(rows[0]!.bytes) / 1e6;
    const ours: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < ctx.repeats + 1; i++) {
      // alternate which goes first: each writes ~10 MB of rows and WAL that the next one may pay for
      const timeRaw = async () => {
        const t = performance.now();
        await rawFork(client, source.sessionId, `raw-fork-${i}`);
        return performance.now() - t;
      };
      const timeOurs = async () => {
        const t = performance.now();
        const fork = await source.fork();
        const ms = performance.now() - t;
        await fork.close();
        return ms;
      };
      let b: number;
      let o: number;
      if (i % 2 === 0) {
        b = await timeRaw();
        o = await timeOurs();
      } else {
        o = await timeOurs();
        b = await timeRaw();
      }
      if (i > 0) {
        base.push(b);
        ours.push(o);
      }
    }
    await source.close();
    const om = median(ours);
    const bm = median(base);
    return [
      {
        scenario: `pg fork a ${mb.toFixed(0)} MB session`,
        unit: "ms",
        ours: om,
        baseline: bm,
        baselineName: "INSERT … SELECT of its rows",
        ratio: om / bm,
        target: "≤ 1.5×",
        met: om / bm <= 1.5,
        extra: { sizeMB: Number(mb.toFixed(1)), entries: messages },
      },
    ];
  } finally {
    await client.end().catch(() => {});
    await backend.close();
    await db.drop();
  }
}
