// Child process for the encrypted crash test: `encrypted-writer-child.ts <sessionPath> <root> <key hex>`:
// opens the encrypted session for writing and appends forever, printing each acknowledged id.
import { SessionManager } from "../../../src/session/session-manager.ts";

const [path, root, keyHex] = process.argv.slice(2) as [string, string, string];
const m = await SessionManager.open(path, { root, lockStaleMs: 2000, encryption: { key: Buffer.from(keyHex, "hex") } });
process.stdout.write(`ready ${m.getEntries().length}\n`);
for (let i = 0; ; i++) {
  const id = m.appendMessage({ role: i % 2 ? "assistant" : "user", content: `entry ${i} ${"pad ".repeat(i % 50)}` });
  process.stdout.write(`${id}\n`);
  if (i % 16 === 15) await new Promise((r) => setImmediate(r));
}
