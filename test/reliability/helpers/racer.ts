// `racer.ts <move|fork-writer|fork> <sessionPath> <root> <tag>`: prints "ok" or the error code.
// fork-writer forks through a manager that holds the write lock; fork uses the lock-free forkFrom.
import { join } from "node:path";
import { SessionManager } from "../../../src/session/session-manager.ts";

const [op, path, root, tag] = process.argv.slice(2) as [string, string, string, string];
try {
  if (op === "move") {
    const m = await SessionManager.open(path, { root });
    await new Promise((r) => setTimeout(r, 1500)); // hold the lock while the other racer (started at the same time) tries
    await m.moveTo(join(root, `moved-${tag}`));
    await m.close();
  } else if (op === "fork-writer") {
    const m = await SessionManager.open(path, { root });
    await new Promise((r) => setTimeout(r, 1500));
    const f = await m.fork({ cwd: join(root, `fork-${tag}`) });
    await f.close();
    await m.close();
  } else {
    const f = await SessionManager.forkFrom(path, join(root, `fork-${tag}`), { root });
    await f.close();
  }
  process.stdout.write("ok\n");
} catch (err) {
  process.stdout.write(`${(err as { code?: string }).code ?? String(err)}\n`);
}
