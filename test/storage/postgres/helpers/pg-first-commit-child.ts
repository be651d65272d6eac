// `pg-first-commit-child.ts <url> <cwd> [image]`: creates a deferred session (deferUntilAssistant) in <cwd>,
// prints "session <id>", then appends a user message (with an image when asked) and an assistant
// message and flushes: the session's first commit.
import { PostgresBackend, SessionManager } from "../../../../src/index.ts";

const [url, cwd, image] = process.argv.slice(2) as [string, string, string | undefined];
const backend = PostgresBackend.of(url);
const m = await SessionManager.create(cwd, { store: backend, deferUntilAssistant: true });
process.stdout.write(`session ${m.sessionId}\n`);
const data = Buffer.from(`image of ${cwd}`).toString("base64");
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
