// Holds a facade session (and so its lock) until killed: argv = agentDir blobsDir cwd.
import { SessionManager } from "../../../src/pi/index.ts";

const [agentDir, blobsDir, cwd] = process.argv.slice(2);
const sm = SessionManager.create(cwd!, undefined, { agentDir, blobsDir });
sm.appendMessage({ role: "user", content: "held" });
sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "by a child" }] });
process.stdout.write(`file ${sm.getSessionFile()}\n`);
setInterval(() => {}, 1000);
