import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../../src/index.ts";
import { onLines, runTs, spawnTs } from "../../support/child.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";

const HOLDER = join(import.meta.dirname, "helpers/pg-artifacts-holder.ts");
const backends: PostgresBackend[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const b of backends.splice(0)) await b.close();
});

/** Starts a holder of the session and resolves with the artifacts directory it printed. */
function hold(url: string, sessionId: string, readOnly: boolean): Promise<{ child: ChildProcess; dir: string }> {
  const child = spawnTs(HOLDER, [JSON.stringify({ url, sessionId, readOnly })]);
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    onLines(child, (line) => {
      if (line.startsWith("dir ")) resolve({ child, dir: line.slice(4) });
    });
    child.on("exit", (code) => reject(new Error(`holder exited ${code}: ${stderr}`)));
  });
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.on("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

describe.skipIf(!pgCluster())("PgArtifactMirror: working directories of killed processes", () => {
  it("are reclaimed by the next open in any process; a live process's directory stays", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    backends.push(backend);
    const m = await SessionManager.create("/w", { store: backend });
    m.appendMessage({ role: "user", content: "go", timestamp: 1 });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 2 });
    m.artifacts!.save("secret tool output\n".repeat(100), { toolType: "bash" });
    await m.close();

    const writer = await hold(url, m.sessionId, false);
    const reader = await hold(url, m.sessionId, true);
    const alive = await hold(url, m.sessionId, true);
    for (const h of [writer, reader, alive]) expect(existsSync(join(h.dir, "0.bash.log"))).toBe(true);
    await killed(writer.child);
    await killed(reader.child);
    // SIGKILL runs no cleanup: the copies are still there
    expect(existsSync(join(writer.dir, "0.bash.log"))).toBe(true);
    expect(existsSync(join(reader.dir, "0.bash.log"))).toBe(true);

    const next = await SessionManager.open(m.sessionId, { store: backend, readOnly: true });
    expect(existsSync(dirname(writer.dir))).toBe(false);
    expect(existsSync(dirname(reader.dir))).toBe(false);
    expect(existsSync(join(alive.dir, "0.bash.log"))).toBe(true);
    await next.close();
    expect(existsSync(dirname(next.artifacts!.dir))).toBe(false);
  });

  it("a process that exits without closing its session removes its working directory", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    backends.push(backend);
    const m = await SessionManager.create("/w", { store: backend });
    m.appendMessage({ role: "user", content: "go", timestamp: 1 });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 2 });
    m.artifacts!.save("output\n", { toolType: "bash" });
    await m.close();
    const run = await runTs(HOLDER, [JSON.stringify({ url, sessionId: m.sessionId, readOnly: false, exitWithoutClose: true })]);
    expect(run.code).toBe(0);
    const dir = /^dir (.*)$/m.exec(run.stdout)![1]!;
    expect(existsSync(dirname(dir))).toBe(false);
  });
});
