// One writer of the 8-process PostgreSQL append scenario:
//   pg-append-child.ts ours|raw <url> <count> <tag> [<batch sizes, comma-separated> (raw)]
// Connects and warms up (500 appends of the same kind into a session of its own, unmeasured: a
// fleet's writer is a long-lived process, not one that JIT-compiles its append path while
// measured), prints "ready", waits for "go" on stdin, appends its `count` messages (ours: its own
// session through SessionManager; raw: batched INSERTs into its own session row), then prints
// {start, end, cpu, batches}: epoch ms, this process's CPU ms while appending, the batch sizes it committed.
import { createInterface } from "node:readline";
import pg from "pg";
import { SessionManager } from "../../src/session/session-manager.ts";
import { PostgresBackend } from "../../src/storage/postgres/pg-backend.ts";
import { appendMessages, appendRaw, appendThroughManager, FLUSH_EVERY, rawSessionRow, recordBatches } from "./pg-append.ts";

const [mode, url, countText, tag, sizesText] = process.argv.slice(2);
const messages = appendMessages(Number(countText), 7 + Number(tag));
const WARM_UP = appendMessages(500, 100 + Number(tag));
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
  const warm = await SessionManager.create(`/bench/pg-append-8/warm-${tag}`, { store: backend });
  await appendThroughManager(warm, WARM_UP, FLUSH_EVERY);
  await warm.close();
  batches.length = 0;
  const manager = await SessionManager.create(`/bench/pg-append-8/${tag}`, { store: backend });
  await go();
  const start = now();
  const cpu = process.cpuUsage();
  await appendThroughManager(manager, messages, FLUSH_EVERY);
  const end = now();
  const used = process.cpuUsage(cpu);
  await manager.close();
  await backend.close();
  console.log(JSON.stringify({ start, end, cpu: (used.user + used.system) / 1000, batches }));
} else {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const sizes = sizesText!.split(",").map(Number);
  await rawSessionRow(client, `raw-8-warm-${tag}-${process.pid}`);
  await appendRaw(client, `raw-8-warm-${tag}-${process.pid}`, WARM_UP, [256, 244]);
  await rawSessionRow(client, `raw-8-${tag}-${process.pid}`);
  await go();
  const start = now();
  const cpu = process.cpuUsage();
  await appendRaw(client, `raw-8-${tag}-${process.pid}`, messages, sizes);
  const end = now();
  const used = process.cpuUsage(cpu);
  await client.end();
  console.log(JSON.stringify({ start, end, cpu: (used.user + used.system) / 1000, batches: sizes }));
}
