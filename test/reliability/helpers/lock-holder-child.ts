// Child process for lock takeover tests: `lock-holder-child.ts <mode> <sessionPath> <root> <staleMs>`.
//   hold  — open for writing, append one entry, print "ready", then idle (timers keep running).
//   busy  — like hold, then print "blocking" and spin the event loop until `<path>.go` exists,
//           then append at once (no timer can run in between) and print "late ok" or "late <code>".
//   poll  — like hold, then poll every 20 ms for `<path>.go` (so SIGSTOP/SIGCONT can freeze it) and
//           append as soon as it appears, printing "late ok" or "late <code>".
import { existsSync } from "node:fs";
import { SessionManager } from "../../../src/session/session-manager.ts";

const [mode, path, root, staleArg] = process.argv.slice(2) as [string, string, string, string];
const m = await SessionManager.open(path, { root, lockStaleMs: Number(staleArg) });
m.appendMessage({ role: "user", content: "holder-1" });
process.stdout.write("ready\n");

const late = () => {
  try {
    m.appendMessage({ role: "user", content: "holder-late" });
    process.stdout.write("late ok\n");
  } catch (err) {
    process.stdout.write(`late ${(err as { code?: string }).code ?? String(err)}\n`);
  }
  process.exit(0);
};

if (mode === "busy") {
  process.stdout.write("blocking\n");
  while (!existsSync(`${path}.go`)) {
    // a blocked event loop: the lock's heartbeat timer cannot run
  }
  late();
} else if (mode === "poll") {
  setInterval(() => {
    if (existsSync(`${path}.go`)) late();
  }, 20);
} else {
  setInterval(() => {}, 1000);
}
