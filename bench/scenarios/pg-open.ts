import pg from "pg";
import { SessionManager } from "../../src/session/session-manager.ts";
import { PostgresBackend } from "../../src/storage/postgres/pg-backend.ts";
import { scratchDatabase } from "../helpers/pg-cluster.ts";
import { median, timeRuns } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { agentMessage, prng } from "../workload.ts";

/** Appends text entries shaped like `writeTextSession`'s (2 KB turns, tool results of 1–50 KB) until their JSON passes `bytes`. */
async function seedSession(backend: PostgresBackend, bytes: number): Promise<string> {
  const random = prng(11);
  const manager = await SessionManager.create("/bench/pg-open", { store: backend });
  let written = 0;
  for (let i = 0; written < bytes; i++) {
    const size = i % 3 === 2 ? 1024 + Math.floor(random() * 49 * 1024) : 2048;
    const message = agentMessage(random, i, size) as { role: string };
    manager.appendMessage(message);
    written += JSON.stringify(message).length + 120;
    if (i % 1000 === 999) await manager.flush();
  }
  await manager.close();
  return manager.sessionId;
}

/** Eager `SessionManager.open` of a 100 MB session over PostgreSQL against a raw ordered SELECT + JSON.parse of its rows. */
export async function benchPgOpen(ctx: BenchContext): Promise<BenchRow[]> {
  const target = ctx.quick ? 10e6 : 100e6;
  const db = await scratchDatabase(ctx.pgUrl!);
  const backend = PostgresBackend.of(db.url);
  const client = new pg.Client({ connectionString: db.url });
  try {
    const id = await seedSession(backend, target);
    await client.connect();
    await client.query("VACUUM ANALYZE entries");
    const { rows: size } = await client.query<{ bytes: string; n: string }>(
      "SELECT sum(octet_length(line)) AS bytes, count(*) AS n FROM entries WHERE session_id = $1",
      [id],
    );
    const mb = Number(size[0]!.bytes) / 1e6;
    const raw = async () => {
      const { rows } = await client.query<{ line: string }>("SELECT line FROM entries WHERE session_id = $1 ORDER BY seq", [id]);
      const entries = rows.map((r) => JSON.parse(r.line) as unknown);
      if (entries.length !== Number(size[0]!.n)) throw new Error("raw read miscounted");
    };
    const ours = async () => {
      const manager = await SessionManager.open(id, { store: backend });
      if (manager.getEntries().length !== Number(size[0]!.n)) throw new Error("open miscounted");
      await manager.close();
    };
    await raw();
    await ours();
    const oursTimes: number[] = [];
    const rawTimes: number[] = [];
    for (let i = 0; i < ctx.repeats; i++) {
      rawTimes.push(...(await timeRuns(1, 0, raw)));
      oursTimes.push(...(await timeRuns(1, 0, ours)));
    }
    const o = mb / (median(oursTimes) / 1000);
    const b = mb / (median(rawTimes) / 1000);
    return [
      {
        scenario: `pg open eager, ${mb.toFixed(0)} MB session`,
        unit: "MB/s",
        ours: o,
        baseline: b,
        baselineName: "SELECT line ORDER BY seq + JSON.parse",
        ratio: o / b,
        target: "≥ 0.8×",
        met: o / b >= 0.8,
        extra: { sizeMB: Number(mb.toFixed(1)), entries: Number(size[0]!.n) },
      },
    ];
  } finally {
    await client.end().catch(() => {});
    await backend.close();
    await db.drop();
  }
}
