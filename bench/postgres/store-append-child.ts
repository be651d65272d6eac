// One appending process of the PostgreSQL multi-process bench. Argument: JSON { url, mode: "ours" | "raw", rows, batch }.
// Prepares its session and lines, prints `ready`, waits on the parent's advisory lock (the start
// barrier), appends, and prints `{"ms": …}`.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { PgStore } from "../../src/storage/postgres/db/index.ts";

const args = JSON.parse(process.argv[2]!) as { url: string; mode: "ours" | "raw"; rows: number; batch: number };
const store = await PgStore.connect(args.url, { maxConnections: 1, migrate: false });
const id = randomUUID();
const header = JSON.stringify({ type: "session", version: 3, id, timestamp: new Date().toISOString(), cwd: "/bench" });
const { token } = await store.createSession(header, { lease: { holder: `bench-${process.pid}`, ttlMs: 600_000 } });
const lines = Array.from({ length: args.rows }, (_, i) => {
  const entryId = (i + 1).toString(16).padStart(8, "0");
  const text = `entry ${i} `.repeat(180).slice(0, 1960);
  return { line: JSON.stringify({ type: "message", id: entryId, message: { role: "user", content: text } }), entryId, kind: "message" };
});
const raw = new pg.Client({ connectionString: args.url });
await raw.connect();
process.stdout.write("ready\n");
await raw.query("SELECT pg_advisory_lock_shared(7331)");
await raw.query("SELECT pg_advisory_unlock_shared(7331)");
const t0 = performance.now();
for (let at = 0; at < args.rows; at += args.batch) {
  const chunk = lines.slice(at, at + args.batch);
  if (args.mode === "ours") {
    await store.appendBatch(id, token!, at + 1, chunk);
  } else {
    await raw.query("BEGIN");
    await raw.query(
      `INSERT INTO entries (session_id, seq, entry_id, kind, line)
       SELECT $1, $2::bigint + o - 1, e, k, l FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(e, k, l, o)`,
      [id, at + 1, chunk.map((l) => l.entryId), chunk.map((l) => l.kind), chunk.map((l) => l.line)],
    );
    await raw.query("COMMIT");
  }
}
const ms = performance.now() - t0;
await raw.end();
await store.close();
process.stdout.write(`${JSON.stringify({ ms })}\n`);
