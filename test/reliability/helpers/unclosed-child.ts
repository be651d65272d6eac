// Child process for leftover-lock tests: `unclosed-child.ts <mode> <sessionPath> <root> <staleMs>`.
// Opens the session for writing, appends one entry, never calls close(), prints "ready", then:
//   exit — lets the process end on its own (the lock's timers do not keep it alive).
//   hold — idles until killed (a live holder, or one to SIGKILL).
import { SessionManager } from "../../../src/session/session-manager.ts";

const [mode, path, root, staleArg] = process.argv.slice(2) as [string, string, string, string];
const m = await SessionManager.open(path, { root, lockStaleMs: Number(staleArg) });
m.appendMessage({ role: "user", content: "unclosed" });
process.stdout.write("ready\n");
if (mode === "hold") setInterval(() => {}, 1000);
