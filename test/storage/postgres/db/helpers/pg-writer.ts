// A writer in its own process, for the PostgreSQL fault tests. Argument: JSON
// { url, sessionId, holder, batches, batchSize, ttlMs?, waitLease?, barrier?, keepLease? }. It takes the session's lease
// (retrying while `waitLease`), then appends `batches` batches from the session's last seq, printing
// `ack <lastSeq>` after each commit. A batch that failed with PERSISTENCE_FAILED (a lost
// connection, a server restart, an ambiguous commit) is retried as is: its seqs make it idempotent.
// Prints `token <n>`, `locked` (lease refused), `fenced` (an append refused: the lease was taken over),
// `retry` (a call failed and is retried), `already <n>` (a retried batch had been committed: not inserted again).
import { setTimeout as delay } from "node:timers/promises";
import { isStoreError } from "../../../../../src/errors.ts";
import { PgStore } from "../../../../../src/storage/postgres/db/index.ts";
import type { PgLine } from "../../../../../src/storage/postgres/db/types.ts";

const args = JSON.parse(process.argv[2]!) as {
  url: string;
  sessionId: string;
  holder: string;
  batches: number;
  batchSize: number;
  ttlMs?: number;
  waitLease?: boolean;
  /** Wait on this advisory lock (held by the test) before taking the lease: a start barrier. */
  barrier?: number;
  /** Exit without releasing the lease. */
  keepLease?: boolean;
};
const out = (line: string) => process.stdout.write(`${line}\n`);

async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isStoreError(err, "PERSISTENCE_FAILED") || attempt > 2000) throw err;
      if (attempt === 0) out("retry");
      await delay(20);
    }
  }
}

const store = await retrying(() => PgStore.connect(args.url, { maxConnections: 2 }));
if (args.barrier !== undefined) {
  const client = await store.pool.connect();
  out("ready");
  await client.query("SELECT pg_advisory_lock_shared($1)", [args.barrier]);
  await client.query("SELECT pg_advisory_unlock_shared($1)", [args.barrier]);
  client.release();
}
let token: number;
for (;;) {
  try {
    token = await retrying(() => store.leases.acquire(args.sessionId, args.holder, args.ttlMs ?? 60_000));
    break;
  } catch (err) {
    if (!isStoreError(err, "SESSION_LOCKED")) throw err;
    if (!args.waitLease) {
      out("locked");
      await store.close();
      process.exit(2);
    }
    await delay(10);
  }
}
out(`token ${token}`);
let seq = (await retrying(() => store.getSession(args.sessionId)))!.lastSeq + 1;
const pad = "x".repeat(2000);
for (let b = 0; b < args.batches; b++) {
  const lines: PgLine[] = [];
  for (let i = 0; i < args.batchSize; i++) {
    const n = seq + i;
    const entryId = `${args.holder}-${n}`;
    lines.push({ line: JSON.stringify({ type: "message", id: entryId, holder: args.holder, n, pad }), entryId, kind: "message" });
  }
  try {
    const result = await retrying(() => store.appendBatch(args.sessionId, token, seq, lines));
    seq = result.lastSeq + 1;
    if (result.alreadyStored > 0) out(`already ${result.alreadyStored}`);
    out(`ack ${result.lastSeq}`);
  } catch (err) {
    if (isStoreError(err, "SESSION_LOCKED")) {
      out("fenced");
      await store.close();
      process.exit(3);
    }
    throw err;
  }
}
if (!args.keepLease) await store.leases.release(args.sessionId, token);
await store.close();
out("done");
