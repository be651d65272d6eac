import { closeSync, ftruncateSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { cwdBucket } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { injectFault } from "../support/fault.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("discovery", () => {
  it("resolves by id prefix, file-name prefix and the id part of the file name", async () => {
    const root = tempDir();
    const cwd = join(root, "p");
    const times = [new Date("2025-01-01T00:00:00Z"), new Date("2025-02-01T00:00:00Z")];
    const made: SessionManager[] = [];
    for (const t of times) {
      const m = await SessionManager.create(cwd, { root, now: () => t });
      m.appendMessage({ role: "user", content: `made ${t.toISOString()}` });
      await m.close();
      made.push(m);
    }
    const [a, b] = made as [SessionManager, SessionManager];
    expect((await SessionManager.resolve(a.sessionId, cwd, { root })).path).toBe(a.sessionFile);
    expect((await SessionManager.resolve(basename(b.sessionFile!).slice(0, 12), cwd, { root })).path).toBe(b.sessionFile);
    // ids made the same millisecond-ish share a prefix; use the full id part of the file name
    expect((await SessionManager.resolve(basename(a.sessionFile!).split("_")[1]!.slice(0, 30), cwd, { root })).id).toBe(a.sessionId);
    await expect(SessionManager.resolve("2025-0", cwd, { root })).rejects.toMatchObject({
      code: "SESSION_AMBIGUOUS",
      message: expect.stringContaining(a.sessionId),
    });
    await expect(SessionManager.resolve("ffffffff", cwd, { root })).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await expect(SessionManager.resolve("", cwd, { root })).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    // found from another cwd through the global search
    expect((await SessionManager.resolve(a.sessionId, "/elsewhere", { root })).path).toBe(a.sessionFile);
  });

  it("lists newest first with complete SessionInfo", async () => {
    const root = tempDir();
    const cwd = join(root, "p");
    const m = await SessionManager.create(cwd, { root });
    m.appendMessage({ role: "user", content: [{ type: "text", text: "first   question\nwith lines" }] });
    m.appendMessage({ role: "assistant", content: "answer" });
    const fork = await m.fork();
    await m.close();
    await fork.close();
    const list = await SessionManager.list(cwd, { root });
    expect(list).toHaveLength(2);
    const info = list.find((s) => s.id === fork.sessionId)!;
    expect(info).toMatchObject({
      path: fork.sessionFile,
      cwd,
      title: null,
      messageCount: 2,
      messageCountExact: true,
      firstMessage: "first question with lines",
      parentSession: m.sessionId,
      tornTail: false,
    });
    expect(info.created.toISOString()).toBe(fork.header.timestamp);
    expect(info.size).toBeGreaterThan(100);
    expect(list[0]!.modified.getTime()).toBeGreaterThanOrEqual(list[1]!.modified.getTime());
  });

  it("lists a 100 MB session exactly by reading each byte once, in a few large reads", async () => {
    const root = tempDir();
    const cwd = join(root, "big");
    const m = await SessionManager.create(cwd, { root });
    m.appendMessage({ role: "user", content: "the start" });
    await m.close();
    const fd = openSync(m.sessionFile!, "a");
    const record = {
      type: "message",
      id: "00000000",
      parentId: null,
      timestamp: "t",
      message: { role: "toolResult", content: "z".repeat(9000) },
    };
    const line = `${JSON.stringify(record)}\n`;
    writeSync(fd, line);
    closeSync(fd);
    const big = openSync(m.sessionFile!, "r+");
    ftruncateSync(big, 100_000_000); // sparse body: 100 MB without writing 100 MB
    closeSync(big);
    let bytes = 0;
    let reads = 0;
    const restore = injectFault("readSync", (_call, args) => {
      bytes += (args[3] as number) ?? 0;
      reads++;
      return undefined;
    });
    try {
      const [info] = await SessionManager.list(cwd, { root });
      expect(info!.size).toBe(100_000_000);
      expect(info!.firstMessage).toBe("the start");
      // The user message and the tool result; the sparse rest is one unterminated line of NULs.
      expect(info!.messageCount).toBe(2);
      expect(info!.messageCountExact).toBe(true);
      expect(info!.tornTail).toBe(true);
    } finally {
      restore();
    }
    // The head, then 1 MiB reads of the rest; the last message's line read again (≤ 64 KiB).
    expect(bytes).toBeLessThanOrEqual(100_000_000 + 2 * 65536);
    expect(reads).toBeLessThanOrEqual(2 + Math.ceil(100_000_000 / 2 ** 20));
  });

  it("lists torn sessions and skips bad headers with a warning, without failing", async () => {
    const root = tempDir();
    const cwd = join(root, "p");
    const m = await SessionManager.create(cwd, { root });
    m.appendMessage({ role: "user", content: "x" });
    await m.close();
    const dir = join(root, "sessions", cwdBucket(cwd));
    writeFileSync(join(dir, "2024-01-01T00-00-00-000Z_garbage.jsonl"), "not a header\n");
    writeFileSync(
      join(dir, "2024-01-02T00-00-00-000Z_torn.jsonl"),
      `${JSON.stringify({ type: "session", version: 3, id: "torn-id", timestamp: "2024-01-02T00:00:00.000Z", cwd })}\n{"type":"mess`,
    );
    writeFileSync(join(dir, "x.quarantine.jsonl"), '{"type":"quarantine"}\n');
    const warnings: StoreWarning[] = [];
    const list = await SessionManager.list(cwd, { root, onWarning: (w) => warnings.push(w) });
    expect(list.map((s) => s.id).sort()).toEqual([m.sessionId, "torn-id"].sort());
    expect(list.find((s) => s.id === "torn-id")!.tornTail).toBe(true);
    expect(warnings.map((w) => [w.code, basename(w.path!)])).toEqual([["BAD_HEADER", "2024-01-01T00-00-00-000Z_garbage.jsonl"]]);
  });

  it("lists omp files whose header follows a wide title slot, with their title", async () => {
    const root = tempDir();
    const cwd = join(root, "omp");
    const dir = join(root, "sessions", cwdBucket(cwd));
    mkdirSync(dir, { recursive: true });
    const slot = JSON.stringify({ type: "title", v: 1, title: "Refactor the CLI" }).padEnd(6000, " ");
    const header = JSON.stringify({ type: "session", version: 3, id: "omp-1", timestamp: "2025-01-01T00:00:00.000Z", cwd });
    writeFileSync(
      join(dir, "2025-01-01T00-00-00-000Z_omp-1.jsonl"),
      `${slot}\n${header}\n${JSON.stringify({
        type: "message",
        id: "aaaaaaaa",
        parentId: null,
        timestamp: "t",
        message: { role: "user", content: "hi" },
      })}\n`,
    );
    const [info] = await SessionManager.list(cwd, { root });
    expect(info).toMatchObject({ id: "omp-1", title: "Refactor the CLI", messageCount: 1, firstMessage: "hi" });
  });

  it("a repeat listing sees every change to a session (the in-process cache follows size and mtime)", async () => {
    const root = tempDir();
    const cwd = join(root, "p");
    const m = await SessionManager.create(cwd, { root });
    m.appendMessage({ role: "user", content: "one" });
    expect((await SessionManager.list(cwd, { root }))[0]!.messageCount).toBe(1);
    expect((await SessionManager.list(cwd, { root }))[0]!.messageCount).toBe(1);
    m.appendMessage({ role: "assistant", content: "two" });
    expect((await SessionManager.list(cwd, { root }))[0]!.messageCount).toBe(2);
    const listed = await SessionManager.list(cwd, { root });
    listed[0]!.messageCount = 99; // callers get copies
    expect((await SessionManager.list(cwd, { root }))[0]!.messageCount).toBe(2);
    await m.close();
  });

  it("continueRecent returns the newest session of the cwd, or a new one", async () => {
    const root = tempDir();
    const cwd = join(root, "p");
    const fresh = await SessionManager.continueRecent(cwd, { root });
    expect(fresh.getEntries()).toEqual([]);
    fresh.appendMessage({ role: "user", content: "one" });
    await fresh.close();
    const newer = await SessionManager.create(cwd, { root, now: () => new Date(Date.now() + 60_000) });
    newer.appendMessage({ role: "user", content: "two" });
    await newer.close();
    const again = await SessionManager.continueRecent(cwd, { root });
    expect(again.sessionId).toBe(newer.sessionId);
    expect(again.getEntries()).toHaveLength(1);
    await again.close();
    const other = await SessionManager.continueRecent(join(root, "other"), { root });
    expect(other.sessionId).not.toBe(newer.sessionId);
    await other.close();
  });
});
