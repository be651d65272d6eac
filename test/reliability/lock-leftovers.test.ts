import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { collectGarbage } from "../../src/maintenance/gc.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { piHome } from "../pi/helpers.ts";
import { onLines, spawnTs } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers/unclosed-child.ts");
const FACADE_CHILD = join(import.meta.dirname, "../pi/helpers/facade-holder-child.ts");
const children: ChildProcess[] = [];

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

/** Starts a child that opens `path` and never closes it; resolves once it holds the lock. */
async function unclosed(mode: "exit" | "hold", path: string, root: string, staleMs: number): Promise<ChildProcess> {
  const child = spawnTs(CHILD, [mode, path, root, String(staleMs)]);
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += String(d)));
  await new Promise<void>((resolve, reject) => {
    onLines(child, (line) => line === "ready" && resolve());
    // "close", not "exit": the exit can be reported before the last line the child wrote is read
    child.once("close", (code) => reject(new Error(`child exited (${code}) before ready: ${stderr}`)));
  });
  return child;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => child.once("exit", () => r()));
}

function ageLock(path: string, ms: number): void {
  const past = new Date(Date.now() - ms);
  utimesSync(`${path}.lock`, past, past);
}

function leftovers(path: string): { dir: boolean; declaration: boolean } {
  return { dir: existsSync(`${path}.lock`), declaration: existsSync(`${path}.lock.json`) };
}

function gc(root: string, dryRun = false) {
  return collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir: join(root, "blobs"), graceMs: 0, dryRun });
}

/** A session file under the store's tree. */
function sessionPath(root: string): string {
  mkdirSync(join(root, "sessions", "proj"), { recursive: true });
  return join(root, "sessions", "proj", "s.jsonl");
}

describe("lock files of managers never closed", () => {
  it("a process that ends without close() leaves neither the lock nor its declaration", async () => {
    const root = tempDir();
    const path = sessionPath(root);
    const child = await unclosed("exit", path, root, 5000);
    await exited(child);
    expect(child.exitCode).toBe(0);
    expect(leftovers(path)).toEqual({ dir: false, declaration: false });
  });

  it("a pi facade session (never closed) of a process ended by SIGTERM leaves neither", async () => {
    const h = piHome();
    const child = spawnTs(FACADE_CHILD, [h.agentDir, h.blobsDir, h.cwd]);
    children.push(child);
    const file = await new Promise<string>((resolve, reject) => {
      onLines(child, (line) => line.startsWith("file ") && resolve(line.slice(5)));
      child.once("close", (code) => reject(new Error(`child exited ${code}`)));
    });
    expect(leftovers(file)).toEqual({ dir: true, declaration: true });
    child.kill("SIGTERM");
    await exited(child);
    expect(child.signalCode).toBe("SIGTERM");
    expect(leftovers(file)).toEqual({ dir: false, declaration: false });
  });

  it("the next opener takes over a SIGKILLed holder's stale lock and leaves nothing once closed", async () => {
    const root = tempDir();
    const path = sessionPath(root);
    const child = await unclosed("hold", path, root, 3000);
    child.kill("SIGKILL");
    await exited(child);
    expect(leftovers(path)).toEqual({ dir: true, declaration: true });
    ageLock(path, 4000);
    const m = await SessionManager.open(path, { root, lockStaleMs: 20_000 });
    expect(JSON.parse(readFileSync(`${path}.lock.json`, "utf8"))).toEqual({ pid: process.pid, staleMs: 20_000 });
    await m.close();
    expect(leftovers(path)).toEqual({ dir: false, declaration: false });
  });

  it("the next opener ignores the declaration of a holder whose lock is gone", async () => {
    const root = tempDir();
    const path = sessionPath(root);
    const child = await unclosed("hold", path, root, 60_000);
    child.kill("SIGKILL");
    await exited(child);
    // The holder's lock directory is gone (removed by hand, or the holder died between the two).
    rmdirSync(`${path}.lock`);
    expect(leftovers(path)).toEqual({ dir: false, declaration: true });
    const m = await SessionManager.open(path, { root, lockStaleMs: 2000 });
    // The leftover is replaced by our own declaration (2 s), and goes with our lock on close.
    expect(JSON.parse(readFileSync(`${path}.lock.json`, "utf8"))).toEqual({ pid: process.pid, staleMs: 2000 });
    await m.close();
    expect(leftovers(path)).toEqual({ dir: false, declaration: false });
  });

  it("gc removes the lock and declaration of a SIGKILLed holder once stale, and a lone declaration", async () => {
    const root = tempDir();
    const killed = sessionPath(root);
    const lone = join(root, "sessions", "proj", "lone.jsonl");
    const child = await unclosed("hold", killed, root, 30_000);
    child.kill("SIGKILL");
    await exited(child);
    writeFileSync(`${lone}.lock.json`, JSON.stringify({ pid: 999_999, staleMs: 10_000 }));
    // Fresh: within the holder's 30 s it may still be alive as far as anyone can prove.
    expect((await gc(root)).lockFilesRemoved).toBe(1);
    expect(leftovers(killed)).toEqual({ dir: true, declaration: true });
    expect(leftovers(lone)).toEqual({ dir: false, declaration: false });
    ageLock(killed, 31_000);
    expect((await gc(root, true)).lockFilesRemoved).toBe(1);
    expect(leftovers(killed)).toEqual({ dir: true, declaration: true });
    expect((await gc(root)).lockFilesRemoved).toBe(1);
    expect(leftovers(killed)).toEqual({ dir: false, declaration: false });
    expect((await gc(root)).lockFilesRemoved).toBe(0);
  });

  it("gc never removes a live holder's lock or declaration, nor a file that is not a declaration", async () => {
    const root = tempDir();
    const path = sessionPath(root);
    const other = join(root, "sessions", "proj", "notes.lock.json");
    writeFileSync(other, '{"not":"ours"}');
    const child = await unclosed("hold", path, root, 30_000);
    // Older than the default period and gc's own, younger than the holder's declared 30 s.
    ageLock(path, 12_000);
    const declaration = readFileSync(`${path}.lock.json`, "utf8");
    expect((await gc(root)).lockFilesRemoved).toBe(0);
    expect(leftovers(path)).toEqual({ dir: true, declaration: true });
    expect(readFileSync(`${path}.lock.json`, "utf8")).toBe(declaration);
    expect(readFileSync(other, "utf8")).toBe('{"not":"ours"}');
    // The holder is still the writer: its next append succeeds.
    expect(child.exitCode).toBeNull();
    await expect(SessionManager.open(path, { root })).rejects.toMatchObject({ code: "SESSION_LOCKED" });
  });
});
