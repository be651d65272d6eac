// Child for the SIGSTOP-inside-a-fenced-transaction test:
//   pg-stopped-writer-child.ts <url> <sessionId> <ttlMs>
// Takes the session's lease for <ttlMs>, opens a transaction and passes the fence (the session row is
// locked), prints "fenced <token> <lastSeq>" and waits for SIGCONT (the parent stops it right there with
// SIGSTOP). Resumed, it writes its entry and commits in that same transaction, printing
// "insert <ok|connection-lost|code>", then retries the entry as a new fenced append: "retry <ok|code>".
import { PgStore } from "../../../src/storage/postgres/db/index.ts";
import { fenceSession } from "../../../src/storage/postgres/db/lease.ts";
import { isConnectionError } from "../../../src/storage/postgres/db/pg-errors.ts";

const [url, id, ttl] = process.argv.slice(2) as [string, string, string];
const line = JSON.stringify({
  type: "message",
  id: "stopped1",
  parentId: null,
  timestamp: "t",
  message: { role: "user", content: "stopped" },
});
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (err: { code?: string }) => (isConnectionError(err) ? "connection-lost" : (err.code ?? String(err))),
  );

const store = await PgStore.connect(url, { migrate: false });
const token = await store.leases.acquire(id, "stopped", Number(ttl));
const client = await store.pool.connect();
client.on("error", () => {});
await client.query("BEGIN");
const lastSeq = await fenceSession(client, id, token, "Appending entries");
const resumed = new Promise((resolve) => process.once("SIGCONT", resolve));
console.log(`fenced ${token} ${lastSeq}`);
await resumed;
const insert = outcome(
  (async () => {
    await client.query("INSERT INTO entries (session_id, seq, entry_id, kind, line) VALUES ($1, $2, 'stopped1', 'message', $3)", [
      id,
      lastSeq + 1,
      line,
    ]);
    await client.query("COMMIT");
  })(),
);
console.log(`insert ${await insert}`);
client.release(true);
console.log(`retry ${await outcome(store.appendBatch(id, token, lastSeq + 1, [{ line, entryId: "stopped1", kind: "message" }]))}`);
await store.close();
