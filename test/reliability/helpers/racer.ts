// `racer.ts <move|fork-writer|fork> <sessionPath> <root> <tag>`: prints "ok" or the error code.
// fork-writer forks through a manager that holds the write lock; fork uses the lock-free forkFrom.
// move and fork-writer print "holding" once they hold the lock and go on only when the test writes a
// line to their stdin (after the other racer finished): the race is decided by the lock, not by time.
import { join } from "node:path";
import { SessionManager } from "../../../src/session/session-manager.ts";

const [op, path, root, tag] = process.argv.slice(2) as [string, string, string, string];

/** Resolves when the test says go (a line on stdin, or stdin closed). */
function go(): Promise<void> {
  process.stdout.write("holding\n");
  return new Promise((resolve) => {
    const done = () => {
      process.stdin.destroy();
      resolve();
    };
    process.stdin.once("data", done);
    process.stdin.once("end", done);
  });
}

try {
  if (op === "move") {
    const m = await SessionManager.open(path, { root });
    await go();
    await m.moveTo(join(root, `moved-${tag}`));
    await m.close();
  } else if (op === "fork-writer") {
    const m = await SessionManager.open(path, { root });
    await go();
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
