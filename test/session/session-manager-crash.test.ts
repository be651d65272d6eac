import { existsSync, readdirSync, readFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { onLines, prng, runTs, spawnTs } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers/writer-child.ts");
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 20);

/** Makes a dead writer's lock look stale at once (instead of sleeping past `stale`). */
function ageLock(path: string): void {
  const lock = `${path}.lock`;
  if (existsSync(lock)) {
    const past = new Date(Date.now() - 60_000);
    utimesSync(lock, past, past);
  }
}

function blobRefs(path: string): string[] {
  return [...readFileSync(path, "utf8").matchAll(/blob:sha256:([0-9a-f]{64})/g)].map((m) => m[1]!);
}

describe("crashes and concurrent writers (real child processes)", () => {
  it(`SIGKILL at seeded random moments loses no acknowledged entry (${ROUNDS} rounds)`, async () => {
    const root = tempDir();
    const path = join(root, "sessions", "crash.jsonl");
    const seedBase = Number(process.env.CRASH_SEED ?? 20261122);
    const random = prng(seedBase);
    const acknowledged: string[] = [];
    let kills = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const target = 1 + Math.floor(random() * 60);
      const child = spawnTs(CHILD, ["append", path, root, String(round + 1)]);
      let stderr = "";
      child.stderr!.on("data", (d) => (stderr += d));
      await new Promise<void>((resolve, reject) => {
        let seen = 0;
        onLines(child, (line) => {
          if (line.startsWith("ready")) return;
          acknowledged.push(line);
          if (++seen === target) child.kill("SIGKILL");
        });
        child.on("exit", (_code, signal) => (signal === "SIGKILL" ? resolve() : reject(new Error(`child exited on its own: ${stderr}`))));
      });
      kills++;
      ageLock(path);
      const reopened = await SessionManager.open(path, { root, rehydrate: "lazy", lockStaleMs: 2000 });
      const ids = new Set(reopened.getEntries().map((e) => e.id));
      for (const id of acknowledged) expect(ids.has(id), `round ${round} (seed ${seedBase}): ${id} lost`).toBe(true);
      expect(reopened.loadReport.malformed).toEqual([]);
      for (const hash of blobRefs(path)) expect(existsSync(join(root, "blobs", hash)), `dangling ref ${hash}`).toBe(true);
      // the next write succeeds on the repaired file
      acknowledged.push(reopened.appendMessage({ role: "user", content: `after round ${round}` }));
      await reopened.close();
    }
    expect(kills).toBe(ROUNDS);
    expect(readdirSync(join(root, "blobs")).filter((n) => n.endsWith(".tmp")).length).toBeLessThanOrEqual(ROUNDS);
    console.log(`crash: ${ROUNDS} rounds, ${kills} kills, ${acknowledged.length} acknowledged entries checked, lost = 0`);
  }, 240_000);

  it("a second writer gets SESSION_LOCKED in another process and in this one; readOnly works meanwhile", async () => {
    const root = tempDir();
    const m = await SessionManager.create(root, { root });
    m.appendMessage({ role: "user", content: "held" });
    const path = m.sessionFile!;
    const other = await runTs(CHILD, ["try-open", path, root]);
    expect(other.stdout.trim()).toBe("SESSION_LOCKED");
    await expect(SessionManager.open(path, { root })).rejects.toMatchObject({ code: "SESSION_LOCKED", path });
    const ro = await SessionManager.open(path, { root, readOnly: true });
    expect(ro.getEntries()).toHaveLength(1);
    await m.close();
    const after = await runTs(CHILD, ["try-open", path, root]);
    expect(after.stdout.trim()).toBe("ok");
  }, 60_000);

  it("readOnly opens succeed while another process appends", async () => {
    const root = tempDir();
    const path = join(root, "live.jsonl");
    const child = spawnTs(CHILD, ["append", path, root, "7"]);
    let count = 0;
    await new Promise<void>((resolve) => onLines(child, () => ++count >= 20 && resolve()));
    let last = 0;
    try {
      for (let i = 0; i < 10; i++) {
        const ro = await SessionManager.open(path, { root, readOnly: true, rehydrate: "lazy" });
        const n = ro.getEntries().length;
        expect(n).toBeGreaterThanOrEqual(last);
        last = n;
      }
    } finally {
      child.kill("SIGKILL");
    }
    expect(last).toBeGreaterThan(0);
  }, 60_000);

  it("a lock left by a SIGKILLed writer is taken over once stale, not before", async () => {
    const root = tempDir();
    const path = join(root, "stale.jsonl");
    const child = spawnTs(CHILD, ["append", path, root, "3"]);
    await new Promise<void>((resolve) => onLines(child, (l) => l.startsWith("ready") || resolve()));
    child.kill("SIGKILL");
    await new Promise((r) => child.on("exit", r));
    await expect(SessionManager.open(path, { root, lockStaleMs: 10_000 })).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    ageLock(path);
    const m = await SessionManager.open(path, { root, lockStaleMs: 10_000 });
    expect(m.getEntries().length).toBeGreaterThan(0);
    await m.close();
  }, 60_000);
});
