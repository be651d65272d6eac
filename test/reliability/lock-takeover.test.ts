import type { ChildProcess } from "node:child_process";
import { readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { onLines, spawnTs } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers/lock-holder-child.ts");

function startHolder(
  mode: string,
  path: string,
  root: string,
  staleMs: number,
): { child: ChildProcess; lines: string[]; next: (prefix: string) => Promise<string>; exited: Promise<unknown> } {
  const child = spawnTs(CHILD, [mode, path, root, String(staleMs)]);
  // listened for from the start: the child may exit before the test reads its last line
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const lines: string[] = [];
  const waiters: Array<{ prefix: string; resolve: (l: string) => void }> = [];
  onLines(child, (line) => {
    lines.push(line);
    for (const w of waiters.splice(0)) {
      if (line.startsWith(w.prefix)) w.resolve(line);
      else waiters.push(w);
    }
  });
  const next = (prefix: string) =>
    new Promise<string>((resolve, reject) => {
      const seen = lines.find((l) => l.startsWith(prefix));
      if (seen !== undefined) return resolve(seen);
      waiters.push({ prefix, resolve });
      // "close" comes after the child's stdout has ended: every line it wrote was seen by then
      child.once("close", (code) => reject(new Error(`child exited (${code}) before "${prefix}": ${lines.join(" | ")}`)));
    });
  return { child, lines, next, exited };
}

/** Ages the lock directory's mtime (the heartbeat) by `ms`, as a holder that stopped refreshing would. */
function ageLock(path: string, ms: number): void {
  const past = new Date(Date.now() - ms);
  utimesSync(`${path}.lock`, past, past);
}

/** Waits (polling the real lock) until the holder's heartbeat is older than `ms`. */
async function untilLockOlderThan(path: string, ms: number): Promise<void> {
  for (;;) {
    if (Date.now() - statSync(`${path}.lock`).mtimeMs > ms) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function contents(path: string): string[] {
  const lines = readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.length > 0);
  return lines.map((l) => {
    const value = JSON.parse(l) as { type: string; message?: { content: string } };
    return value.type === "session" ? "header" : (value.message?.content ?? value.type);
  });
}

describe("lock takeover", () => {
  it("is judged by the holder's stale period, not the taker's", async () => {
    const root = tempDir();
    const path = join(root, "s.jsonl");
    const holder = startHolder("hold", path, root, 30_000);
    try {
      await holder.next("ready");
      // 12 s without a heartbeat: stale for a 10 s (default) or 2 s taker, not for this holder.
      ageLock(path, 12_000);
      await expect(SessionManager.open(path, { root })).rejects.toMatchObject({ code: "SESSION_LOCKED" });
      await expect(SessionManager.open(path, { root, lockStaleMs: 2000 })).rejects.toMatchObject({ code: "SESSION_LOCKED" });
      // Past the holder's own 30 s the lock is abandoned by its definition and is taken over.
      holder.child.kill("SIGKILL");
      await holder.exited;
      ageLock(path, 31_000);
      const taker = await SessionManager.open(path, { root, lockStaleMs: 2000 });
      expect(taker.getEntries()).toHaveLength(1);
      await taker.close();
    } finally {
      holder.child.kill("SIGKILL");
    }
  }, 60_000);

  /**
   * The holder stops refreshing its lock (event loop spinning, or the process stopped), a taker
   * takes the stale lock over and appends, then the holder tries one more append at once.
   */
  async function takeOverThenLateAppend(mode: "busy" | "poll"): Promise<{ late: string; lines: string[] }> {
    const root = tempDir();
    const path = join(root, "s.jsonl");
    const holder = startHolder(mode, path, root, 2000);
    try {
      if (mode === "busy") await holder.next("blocking");
      else {
        await holder.next("ready");
        holder.child.kill("SIGSTOP");
      }
      await untilLockOlderThan(path, 2100);
      const taker = await SessionManager.open(path, { root, lockStaleMs: 2000 });
      taker.appendMessage({ role: "user", content: "taker-1" });
      writeFileSync(`${path}.go`, "");
      if (mode === "poll") holder.child.kill("SIGCONT");
      const late = await holder.next("late");
      taker.appendMessage({ role: "user", content: "taker-2" });
      await taker.close();
      return { late, lines: contents(path) };
    } finally {
      holder.child.kill("SIGKILL");
    }
  }

  it("a writer whose event loop was blocked past its stale period never appends after a takeover", async () => {
    const { late, lines } = await takeOverThenLateAppend("busy");
    expect(late).toBe("late SESSION_LOCKED");
    expect(lines).toEqual(["header", "holder-1", "taker-1", "taker-2"]);
  }, 60_000);

  it("a writer frozen by SIGSTOP and thawed after a takeover never appends", async () => {
    const { late, lines } = await takeOverThenLateAppend("poll");
    // Thawed, its loop runs again: the append's own check or the heartbeat timer, whichever runs
    // first, finds the lock gone; either way nothing is appended.
    expect(late).toMatch(/^late (SESSION_LOCKED|READ_ONLY)$/);
    expect(lines).toEqual(["header", "holder-1", "taker-1", "taker-2"]);
  }, 60_000);

  it("a writer blocked past its stale period with no taker refreshes its lock and goes on", async () => {
    const root = tempDir();
    const path = join(root, "s.jsonl");
    const holder = startHolder("busy", path, root, 2000);
    try {
      await holder.next("blocking");
      await untilLockOlderThan(path, 2100);
      writeFileSync(`${path}.go`, "");
      expect(await holder.next("late")).toBe("late ok");
      await holder.exited;
      expect(contents(path)).toEqual(["header", "holder-1", "holder-late"]);
    } finally {
      holder.child.kill("SIGKILL");
    }
  }, 60_000);
});
