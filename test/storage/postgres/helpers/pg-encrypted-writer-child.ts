// `pg-encrypted-writer-child.ts <url> <sessionId> <key hex>`: opens the encrypted database session for
// writing and appends forever; after each flush (the acknowledgement) prints the ids it acknowledged.
import { PostgresBackend, SessionManager } from "../../../../src/index.ts";

const [url, sessionId, keyHex] = process.argv.slice(2) as [string, string, string];
const backend = PostgresBackend.of(url);
const m = await SessionManager.open(sessionId, { store: backend, lockStaleMs: 2000, encryption: { key: Buffer.from(keyHex, "hex") } });
process.stdout.write(`ready ${m.getEntries().length}\n`);
for (let i = 0; ; i++) {
  const ids: string[] = [];
  for (let j = 0; j < 1 + (i % 5); j++) {
    ids.push(m.appendMessage({ role: j % 2 ? "assistant" : "user", content: `entry ${i}.${j} ${"pad ".repeat((i * 7 + j) % 50)}` }));
  }
  await m.flush();
  for (const id of ids) process.stdout.write(`${id}\n`);
}
