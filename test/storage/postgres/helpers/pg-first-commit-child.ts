// `pg-first-commit-child.ts <url> <cwd> [image|text] [lockStaleMs]`: creates a deferred session (deferUntilAssistant) in <cwd>,
// prints "session <id>", then appends a user message (with an image when asked) and an assistant
// message and flushes: the session's first commit.
import { PostgresBackend, SessionManager } from "../../../../src/index.ts";

const [url, cwd, image, staleMs] = process.argv.slice(2) as [string, string, string | undefined, string | undefined];
const backend = PostgresBackend.of(url);
const lockStaleMs = staleMs === undefined ? undefined : Number(staleMs);
const m = await SessionManager.create(cwd, { store: backend, deferUntilAssistant: true, lockStaleMs });
process.stdout.write(`session ${m.sessionId}\n`);
const data = Buffer.alloc(4096, 7).toString("base64"); // over the blob threshold: stored as a blob row
m.appendMessage({
  role: "user",
  content: image === "image" ? [{ type: "image", data, mimeType: "image/png" }] : "hello",
  timestamp: 1,
});
m.appendMessage({ role: "assistant", content: [{ type: "text", text: "hi" }], timestamp: 2 });
await m.flush();
process.stdout.write("flushed\n");
await m.close();
await backend.close();
