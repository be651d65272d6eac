import pg from "pg";
import { SessionManager } from "../../src/session/session-manager.ts";
import { PostgresBackend } from "../../src/storage/postgres/pg-backend.ts";
import { scratchDatabase } from "../helpers/pg-cluster.ts";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { agentMessage, prng } from "../workload.ts";

/**
 * `count` sessions in 100 cwds: 100 written through SessionManager (header + 6 messages each), then
 * each copied server-side under new ids (rows, header line and entries alike) up to `count`.
 */
async function seedSessions(backend: PostgresBackend, client: pg.Client, count: number): Promise<void> {
  const random = prng(5);
  for (let b = 0; b < 100; b++) {
    const manager = await SessionManager.create(`/home/u/project-${b}`, { store: backend });
    for (let k = 0; k < 6; k++) manager.appendMessage(agentMessage(random, k, 600) as { role: string });
    await manager.close();
  }
  const copies = count / 100 - 1;
  const newId = "left(s.id, 24) || lpad(g::text, 12, '0')";
  await client.query(
    `INSERT INTO sessions (id, cwd, created, modified, header, parent_session, title, first_message, first_message_seq,
                           message_count, last_seq)
     SELECT ${newId}, s.cwd, s.created + g * interval '1 second', s.modified + g * interval '1 second', replace(s.header, s.id, ${newId}),
            s.parent_session, s.title, s.first_message, s.first_message_seq, s.message_count, s.last_seq
       FROM sessions s, generate_series(1, $1::int) g`,
    [copies],
  );
  await client.query(
    `INSERT INTO entries (session_id, seq, entry_id, kind, line)
     SELECT ${newId.replace("s.id", "e.session_id")}, e.seq, e.entry_id, e.kind, e.line FROM entries e, generate_series(1, $1::int) g`,
    [copies],
  );
  await client.query("VACUUM ANALYZE");
}

/**
 * The listing's columns (as the store selects them), straight from the table in the listing's order
 * (for all rows the planner sorts a sequential scan rather than walk the (modified, id) index).
 */
const RAW_LIST = `SELECT id, cwd, title, created, modified, parent_session, first_message,
  message_count::float8 AS message_count, last_seq::float8 AS last_seq FROM sessions ORDER BY modified DESC, id DESC`;

/** Samples per repeat (alternating raw and ours; a listing takes tens of ms, so one sample is mostly noise here). */
const SAMPLES = 5;

/** `SessionManager.listAll` of 10,000 sessions over PostgreSQL against a raw indexed SELECT of the same columns. */
export async function benchPgList(ctx: BenchContext): Promise<BenchRow[]> {
  const count = ctx.quick ? 2000 : 10_000;
  const db = await scratchDatabase(ctx.pgUrl!);
  const backend = PostgresBackend.of(db.url);
  const client = new pg.Client({ connectionString: db.url });
  try {
    await client.connect();
    await seedSessions(backend, client, count);
    const raw = async () => {
      const t = performance.now();
      if ((await client.query(RAW_LIST)).rows.length !== count) throw new Error("raw listing miscounted");
      return performance.now() - t;
    };
    const ours = async () => {
      const t = performance.now();
      if ((await SessionManager.listAll({ store: backend })).length !== count) throw new Error("listAll miscounted");
      return performance.now() - t;
    };
    await raw();
    await ours();
    const o: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < ctx.repeats * SAMPLES; i++) {
      b.push(await raw());
      o.push(await ours());
    }
    const om = median(o);
    const bm = median(b);
    return [
      {
        scenario: `pg list ${count} sessions`,
        unit: "ms",
        ours: om,
        baseline: bm,
        baselineName: "SELECT same columns ORDER BY modified",
        ratio: om / bm,
        target: "≤ 1.5×",
        met: om / bm <= 1.5,
      },
    ];
  } finally {
    await client.end().catch(() => {});
    await backend.close();
    await db.drop();
  }
}
