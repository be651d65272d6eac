import pg from "pg";
import { PostgresBackend } from "../../src/storage/postgres/pg-backend.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { appendMessages, appendRaw, appendThroughManager, FLUSH_EVERY, rawSessionRow, recordBatches } from "../helpers/pg-append.ts";
import { scratchDatabase } from "../helpers/pg-cluster.ts";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";

/** One measured round: ours (recording its batches), then the raw INSERTs in the same batch sizes. */
async function round(
  url: string,
  messages: ReadonlyArray<{ role: string }>,
  tag: string,
): Promise<{ ours: number; raw: number; batches: number[] }> {
  const backend = PostgresBackend.of(url);
  const client = new pg.Client({ connectionString: url });
  try {
    const batches = recordBatches(await backend.connect());
    const manager = await SessionManager.create("/bench/pg-append", { store: backend });
    const ours = await appendThroughManager(manager, messages, FLUSH_EVERY);
    await manager.close();
    await client.connect();
    await rawSessionRow(client, `raw-${tag}`);
    const raw = await appendRaw(client, `raw-${tag}`, messages, batches);
    const { rows } = await client.query<{ n: string }>("SELECT count(*) AS n FROM entries WHERE session_id = $1", [manager.sessionId]);
    if (Number(rows[0]!.n) !== messages.length) throw new Error(`ours stored ${rows[0]!.n} rows, not ${messages.length}`);
    return { ours, raw, batches };
  } finally {
    await client.end().catch(() => {});
    await backend.close();
  }
}

/** Appends through SessionManager over PostgreSQL in one process, against raw batched INSERTs of the same rows. */
export async function benchPgAppend(ctx: BenchContext): Promise<BenchRow[]> {
  const n = ctx.quick ? 2000 : 20_000;
  const db = await scratchDatabase(ctx.pgUrl!);
  try {
    await round(db.url, appendMessages(500), "warm");
    const messages = appendMessages(n);
    const runs = [];
    for (let i = 0; i < ctx.repeats; i++) runs.push(await round(db.url, messages, String(i)));
    const ours = median(runs.map((r) => (n / r.ours) * 1000));
    const base = median(runs.map((r) => (n / r.raw) * 1000));
    return [
      {
        scenario: "pg append, 1 process",
        unit: "appends/s",
        ours,
        baseline: base,
        baselineName: `batched INSERT, ${runs[0]!.batches.length} batches`,
        ratio: ours / base,
        target: "≥ 0.8×",
        met: ours / base >= 0.8,
        extra: { appends: n, flushEvery: FLUSH_EVERY, batches: runs[0]!.batches.length },
      },
    ];
  } finally {
    await db.drop();
  }
}
