/**
 * A child process holding an incognito session with an artifact and an agent output, for the
 * exit tests: prints the session's temp directory, then `exit` exits without close(), `throw`
 * dies of an uncaught error, `wait` waits to be killed (SIGKILL).
 */
import { SessionManager } from "../../../src/session/session-manager.ts";
import type { IncognitoSessionStorage } from "../../../src/storage/incognito-session.ts";

const [mode, root] = process.argv.slice(2) as [string, string];
const sm = await SessionManager.create(`${root}/project`, { root, incognito: true });
sm.appendMessage({ role: "user", content: "incognito text" });
const artifacts = sm.artifacts!;
artifacts.save("artifact body", { toolType: "bash" });
artifacts.saveAgentOutput(artifacts.allocateAgentOutputId("reviewer"), "# agent output");
process.stdout.write(`${(sm.storage as IncognitoSessionStorage).artifactsTempDir}\n`);
if (mode === "exit") process.exit(0);
if (mode === "throw")
  setImmediate(() => {
    throw new Error("boom");
  });
if (mode === "wait") setInterval(() => {}, 1 << 30);
