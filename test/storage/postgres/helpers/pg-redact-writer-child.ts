// `pg-redact-writer-child.ts <url> <root> <text>`: a writer with its own store root on a shared database,
// redacting secrets; appends `text` as a user message and prints "session <id>" once it is stored.
import { PostgresBackend, SessionManager } from "../../../../src/index.ts";

const [url, root, text] = process.argv.slice(2) as [string, string, string];
const backend = PostgresBackend.of(url);
const m = await SessionManager.create("/shared", { root, store: backend, redact: "secrets" });
m.appendMessage({ role: "user", content: text });
await m.close();
await backend.close();
process.stdout.write(`session ${m.sessionId}\n`);
