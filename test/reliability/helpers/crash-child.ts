// Child for the crash matrix: `crash-child.ts <op> <workDir> <root>`; prints a line after each
// acknowledged step, and loops until the parent SIGKILLs it.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { ArtifactStore } from "../../../src/artifacts/artifact-store.ts";
import { OutputSink } from "../../../src/artifacts/output-sink.ts";
import { collectGarbage } from "../../../src/maintenance/gc.ts";
import { migrateFile } from "../../../src/maintenance/migrate-file.ts";
import { io } from "../../../src/io.ts";
import { SessionManager } from "../../../src/session/session-manager.ts";
import { sha } from "../../support/sha.ts";

const [op, work, root] = process.argv.slice(2) as [string, string, string];
const say = (line: string) => process.stdout.write(`${line}\n`);

switch (op) {
  case "rewrite": {
    // open each prepared legacy copy for writing: the open rewrites it as v3
    for (const name of readdirSync(work)
      .filter((n) => n.endsWith(".jsonl"))
      .sort()) {
      const m = await SessionManager.open(join(work, name), { root, rehydrate: "lazy" });
      await m.close();
      say(`done ${name}`);
    }
    break;
  }
  case "migrate": {
    for (const name of readdirSync(work)
      .filter((n) => n.endsWith(".jsonl"))
      .sort()) {
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
  // biome-ignore lint/suspicious/noFallthroughSwitchClause: the clause above loops until killed
  case "move-once": {
    // One move, SIGKILLed by itself just before its Nth effectful I/O call (TS_KILL_AT=N): every
    // kill point of a move can be reached deterministically. Prints "done" when no kill was due.
    const [source] = readdirSync(work).filter((n) => n.endsWith(".jsonl"));
    const m = await SessionManager.open(join(work, source!), { root, lockStaleMs: 2000 });
    killAtNthEffect(Number(process.env.TS_KILL_AT ?? -1));
    await m.moveTo(join(root, "cwd-a"));
    say("done");
    process.exit(0);
  }
  case "gc": {
    for (;;) {
      const r = await collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir: join(root, "blobs"), graceMs: 0 });
      say(`gc ${r.deleted.length}`);
    }
  }
  case "artifact-save": {
    const store = new ArtifactStore(work);
    for (let i = 0; ; i++) {
      const content = `artifact ${i} `.repeat(((i * 7919) % 50) * 400 + 1);
      const ref = store.save(content, { toolType: "bash" });
      say(`saved ${ref.id} ${sha(content)}`);
    }
  }
  case "sink-spill": {
    const store = new ArtifactStore(work);
    for (let i = 0; ; i++) {
      const sink = new OutputSink({ artifacts: store, toolType: "stream", spillThreshold: 4096 });
      const hash = createHash("sha256");
      for (let c = 0; c < 40; c++) {
        const chunk = `run ${i} chunk ${c} ünïcødé ✓ ${"=".repeat(c * 37)}\n`;
        hash.update(chunk);
        sink.push(chunk);
      }
      const summary = sink.dump();
      say(`sink ${summary.artifactId} ${hash.digest("hex")}`);
    }
  }
  default:
    throw new Error(`unknown op ${op}`);
}

/** Wraps every I/O call that changes the disk so the Nth one SIGKILLs this process instead. */
function killAtNthEffect(n: number): void {
  const effects = ["openSync", "writeSync", "renameSync", "unlinkSync", "rmSync", "mkdirSync", "copyFileSync", "linkSync", "ftruncateSync"];
  let count = 0;
  for (const name of effects) {
    const seam = io as unknown as Record<string, (...args: unknown[]) => unknown>;
    const original = seam[name]!;
    seam[name] = (...args: unknown[]) => {
      // opens count only when they may write: string flags other than "r", numeric ones with a write mode
      const flags = args[1];
      const writes = name !== "openSync" || (typeof flags === "string" ? flags !== "r" : typeof flags === "number" && (flags & 3) !== 0);
      if (writes && count++ === n) process.kill(process.pid, "SIGKILL");
      return original(...args);
    };
  }
}
