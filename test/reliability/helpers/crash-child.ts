// Child for the crash matrix: `crash-child.ts <op> <workDir> <root>`; prints a line after each
// acknowledged step, and loops until the parent SIGKILLs it.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { collectGarbage } from "../../../src/maintenance/gc.ts";
import { migrateFile } from "../../../src/maintenance/migrate-file.ts";
import { SessionManager } from "../../../src/session/session-manager.ts";

const [op, work, root] = process.argv.slice(2) as [string, string, string];
const say = (line: string) => process.stdout.write(`${line}\n`);

switch (op) {
  case "rewrite": {
    // open each prepared legacy copy for writing: the open rewrites it as v3
    for (const name of readdirSync(work).filter((n) => n.endsWith(".jsonl")).sort()) {
      const m = await SessionManager.open(join(work, name), { root, rehydrate: "lazy" });
      await m.close();
      say(`done ${name}`);
    }
    break;
  }
  case "migrate": {
    for (const name of readdirSync(work).filter((n) => n.endsWith(".jsonl")).sort()) {
      const r = await migrateFile(join(work, name), { sessionsDir: join(root, "sessions"), blobsDir: join(root, "blobs"), inPlace: true });
      say(`${r.status} ${name}`);
    }
    break;
  }
  case "fork": {
    const [source] = readdirSync(work).filter((n) => n.endsWith(".jsonl"));
    const m = await SessionManager.open(join(work, source!), { root, readOnly: true });
    for (;;) {
      const fork = await m.fork();
      fork.appendMessage({ role: "user", content: "forked run" });
      await fork.close();
      say(`fork ${fork.sessionFile}`);
    }
  }
  case "move": {
    const [source] = readdirSync(work).filter((n) => n.endsWith(".jsonl"));
    const m = await SessionManager.open(join(work, source!), { root, lockStaleMs: 2000 });
    for (let i = 0; ; i++) {
      await m.moveTo(join(root, i % 2 ? "cwd-a" : "cwd-b"));
      say(`moved ${m.sessionFile}`);
    }
  }
  case "gc": {
    for (;;) {
      const r = await collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir: join(root, "blobs"), graceMs: 0 });
      say(`gc ${r.deleted.length}`);
    }
  }
  default:
    throw new Error(`unknown op ${op}`);
}
