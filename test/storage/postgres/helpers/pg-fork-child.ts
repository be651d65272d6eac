// `pg-fork-child.ts <url> <sessionId> <atEntryId>`: forks a branch of a database session;
// `pg-fork-child.ts <url> unstored`: forks a session not stored yet (deferred: no assistant message).
// Prints "forked <id>".
import { PostgresBackend, SessionManager } from "../../../../src/index.ts";

const [url, sessionId, atEntryId] = process.argv.slice(2) as [string, string, string | undefined];
const backend = PostgresBackend.of(url);
const source =
  sessionId === "unstored"
    ? await SessionManager.create("/unstored", { store: backend, deferUntilAssistant: true })
    : await SessionManager.open(sessionId, { store: backend, readOnly: true });
if (sessionId === "unstored") for (const text of ["one", "two"]) source.appendMessage({ role: "user", content: text });
const fork = await source.fork({ atEntryId, cwd: "/forked" });
process.stdout.write(`forked ${fork.sessionId}\n`);
await fork.close();
await source.close();
await backend.close();
