// Child for the lifecycle crash and race tests.
//   rm|restore|purge <root> <sessionId> <n>: runs the operation and SIGKILLs itself right after its n-th rename.
//   writer <root> <cwd> [store-url]: creates a session (in the database when a URL is given), prints
//     `ready <id> <path>`, then appends forever, printing `acked <n>` after each acknowledged append, until killed.
import { io } from "../../../src/io.ts";
import { Lifecycle } from "../../../src/lifecycle/lifecycle.ts";
import { SessionManager } from "../../../src/session/session-manager.ts";

const [op, root, arg, n] = process.argv.slice(2) as [string, string, string, string | undefined];
const say = (line: string) => process.stdout.write(`${line}\n`);

if (op === "rm" || op === "restore" || op === "purge") {
  let renames = 0;
  const rename = io.renameSync;
  io.renameSync = (from, to) => {
    rename(from, to);
    if (++renames === Number(n)) process.kill(process.pid, "SIGKILL");
  };
  const life = Lifecycle.open({ root });
  if (op === "rm") await life.rm(arg);
  else if (op === "restore") await life.restore(arg);
  else await life.purge({ refs: [arg] });
  say(`done ${renames}`);
} else if (op === "writer") {
  const m = await SessionManager.create(arg, n === undefined ? { root, fsync: true } : { root, store: n });
  m.appendMessage({ role: "user", content: "start", timestamp: 0 } as never);
  await m.flush();
  say(`ready ${m.sessionId} ${m.location}`);
  for (let i = 1; ; i++) {
    m.appendMessage({ role: "user", content: `line ${i}`, timestamp: i } as never);
    await m.flush(); // the acknowledgement (a database batches appends until flushed)
    say(`acked ${i}`);
    await new Promise((r) => setImmediate(r));
  }
}
