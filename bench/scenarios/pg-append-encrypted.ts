import { randomBytes } from "node:crypto";
import { PostgresBackend } from "../../src/storage/postgres/pg-backend.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import type { SessionManagerOptions } from "../../src/session/session-options.ts";
import { appendMessages, appendThroughManager, FLUSH_EVERY } from "../helpers/pg-append.ts";
import { scratchDatabase } from "../helpers/pg-cluster.ts";
import { median } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";

/** ms to append `messages` (flushing every FLUSH_EVERY) to a new database session made with `options`. */
async function appendAll(url: string, messages: ReadonlyArray<{ role: string }>, options: SessionManagerOptions): Promise<number> {
  const backend = PostgresBackend.of(url);
  try {
    const manager = await SessionManager.create("/bench/pg-append-encrypted", { store: backend, ...options });
    const ms = await appendThroughManager(manager, messages, FLUSH_EVERY);
    await manager.close();
    return ms;
  } finally {
    await backend.close();
  }
}

/** Appends to an encrypted database session against plain ones, same messages, same run, alternating order. */
export async function benchPgAppendEncrypted(ctx: BenchContext): Promise<BenchRow[]> {
  const n = ctx.quick ? 2000 : 20_000;
  const db = await scratchDatabase(ctx.pgUrl!);
  try {
    const encryption = { key: randomBytes(32) };
    await appendAll(db.url, appendMessages(500), {}); // warm-up
    await appendAll(db.url, appendMessages(500), { encryption });
    const messages = appendMessages(n);
    const plain: number[] = [];
    const encrypted: number[] = [];
    for (let i = 0; i < ctx.repeats; i++) {
      // Alternating order: neither side always runs on a warmer (or busier) machine.
      if (i % 2 === 0) {
        plain.push(await appendAll(db.url, messages, {}));
        encrypted.push(await appendAll(db.url, messages, { encryption }));
      } else {
        encrypted.push(await appendAll(db.url, messages, { encryption }));
        plain.push(await appendAll(db.url, messages, {}));
      }
    }
    const ours = (median(encrypted) / n) * 1000;
    const base = (median(plain) / n) * 1000;
    return [
      {
        scenario: "pg append, encrypted",
        unit: "µs/append",
        ours,
        baseline: base,
        baselineName: "plain appends to the same database",
        ratio: ours / base,
        target: "≤ 2×",
        met: ours / base <= 2,
        extra: { appends: n, flushEvery: FLUSH_EVERY },
      },
    ];
  } finally {
    await db.drop();
  }
}
