// One writer of the 8-process PostgreSQL append scenario:
//   pg-append-child.ts ours|raw <url> <count> <tag> [<batch sizes, comma-separated> (raw)]
// Connects and prepares, prints "ready", waits for "go" on stdin, appends its `count` messages
// (ours: its own session through SessionManager; raw: batched INSERTs into its own session row),
// then prints {start, end, batches} (epoch ms, the batch sizes it committed).
import { createInterface } from "node:readline";
import pg from "pg";
import { SessionManager } from "../../src/session/session-manager.ts";
import { PostgresBackend } from "../../src/storage/postgres/pg-backend.ts";
import { appendMessages, appendRaw, appendThroughManager, FLUSH_EVERY, rawSessionRow, recordBatches } from "./pg-append.ts";

const [mode, url, countText, tag, sizesText] = process.argv.slice(2);
const messages = appendMessages(Number(countText), 7 + Number(tag));
const now = () => performance.timeOrigin + performance.now();

function go(): Promise<void> {
  process.stdout.write("ready\n");
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.once("line", () => {
      lines.close();
      process.stdin.destroy(); // else the open pipe keeps this process alive after its work
      resolve();
    });
  });
}

if (mode === "ours") {
  const backend = PostgresBackend.of(url!);
  const batches = recordBatches(await backend.connect());
  const manager = await SessionManager.create(`/bench/pg-append-8/${tag}`, { store: backend });
  await go();
  const start = now();
  await appendThroughManager(manager, messages, FLUSH_EVERY);
  const end = now();
  await manager.close();
  await backend.close();
  console.log(JSON.stringify({ start, end, batches }));
} else {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const sizes = sizesText!.split(",").map(Number);
  await rawSessionRow(client, `raw-8-${tag}-${process.pid}`);
  await go();
  const start = now();
  await appendRaw(client, `raw-8-${tag}-${process.pid}`, messages, sizes);
  const end = now();
  await client.end();
  console.log(JSON.stringify({ start, end, batches: sizes }));
}
