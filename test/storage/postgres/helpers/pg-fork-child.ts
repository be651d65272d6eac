// `pg-fork-child.ts <url> <sessionId> <atEntryId>`: forks a branch of a database session; prints "forked <id>".
import { PostgresBackend, SessionManager } from "../../../../src/index.ts";

const [url, sessionId, atEntryId] = process.argv.slice(2) as [string, string, string];
const backend = PostgresBackend.of(url);
const source = await SessionManager.open(sessionId, { store: backend, readOnly: true });
const fork = await source.fork({ atEntryId, cwd: "/forked" });
process.stdout.write(`forked ${fork.sessionId}\n`);
await fork.close();
await source.close();
await backend.close();
