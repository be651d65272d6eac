import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { io } from "../../src/io.ts";
import { appendHandles, limitForDescriptors, openHandleCount, softDescriptorLimit } from "../../src/session/append-handles.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { REPO_ROOT } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const defaultLimit = appendHandles.limit;
const realOpen = io.openSync;
const realClose = io.closeSync;
afterEach(() => {
  appendHandles.limit = defaultLimit;
  io.openSync = realOpen;
  io.closeSync = realClose;
});

/** Counts opens of `.jsonl` files through the io seam. */
function countSessionOpens(): { count: number } {
  const counter = { count: 0 };
  io.openSync = ((path: string, flags: number, mode?: number) => {
    if (String(path).endsWith(".jsonl")) counter.count++;
    return realOpen(path, flags, mode);
  }) as typeof io.openSync;
  return counter;
}

function lines(path: string): string[] {
  return readFileSync(path, "utf8").split("\n").filter(Boolean);
}

/**
 * Makes `io` act as a process with room for `room` descriptors of the files `counted` picks: an
 * open of such a file past that fails with EMFILE while the returned switch is on.
 */
function limitDescriptors(room: number, counted: (path: string) => boolean): { on: boolean } {
  const limit = { on: true };
  const held = new Set<number>();
  io.openSync = ((path: string, flags: number, mode?: number) => {
    const counts = counted(String(path));
    if (limit.on && counts && held.size >= room) throw Object.assign(new Error("EMFILE: too many open files"), { code: "EMFILE" });
    const fd = realOpen(path, flags, mode);
    if (counts) held.add(fd);
    return fd;
  }) as typeof io.openSync;
  io.closeSync = ((fd: number) => {
    held.delete(fd);
    realClose(fd);
  }) as typeof io.closeSync;
  return limit;
}

describe("bounded append handles", () => {
  it("an evicted handle reopens and appends after the lines it knew", async () => {
    appendHandles.limit = 1;
    const root = tempDir();
    const a = await SessionManager.create(join(root, "a"), { root });
    const b = await SessionManager.create(join(root, "b"), { root });
    a.appendMessage({ role: "user", content: "a1" });
    b.appendMessage({ role: "user", content: "b1" }); // evicts a's descriptor
    expect(openHandleCount()).toBe(1);
    a.appendMessage({ role: "user", content: "a2" }); // reopens a, evicts b
    b.appendMessage({ role: "user", content: "b2" });
    await a.flush();
    expect(lines(a.sessionFile!).map((l) => JSON.parse(l).message?.content)).toEqual([undefined, "a1", "a2"]);
    expect(lines(b.sessionFile!).map((l) => JSON.parse(l).message?.content)).toEqual([undefined, "b1", "b2"]);
    await a.close();
    await b.close();
    expect(openHandleCount()).toBe(0);
  });

  it("refuses to append to a file replaced (or grown) behind an evicted handle", async () => {
    appendHandles.limit = 1;
    const root = tempDir();
    const a = await SessionManager.create(join(root, "a"), { root });
    const b = await SessionManager.create(join(root, "b"), { root });
    a.appendMessage({ role: "user", content: "a1" });
    b.appendMessage({ role: "user", content: "b1" }); // evicts a's descriptor
    const path = a.sessionFile!;
    const replaced = `${readFileSync(path, "utf8")}`;
    writeFileSync(`${path}.other`, replaced);
    renameSync(`${path}.other`, path); // same bytes, another file
    expect(() => a.appendMessage({ role: "user", content: "a2" })).toThrow(expect.objectContaining({ code: "PERSISTENCE_FAILED" }));
    expect(readFileSync(path, "utf8")).toBe(replaced);

    b.appendMessage({ role: "user", content: "b2" });
    const c = await SessionManager.create(join(root, "c"), { root });
    c.appendMessage({ role: "user", content: "c1" }); // evicts b
    writeFileSync(b.sessionFile!, "x\n", { flag: "a" }); // grown in place behind the evicted handle
    const grown = readFileSync(b.sessionFile!, "utf8");
    expect(() => b.appendMessage({ role: "user", content: "b3" })).toThrow(expect.objectContaining({ code: "PERSISTENCE_FAILED" }));
    expect(readFileSync(b.sessionFile!, "utf8")).toBe(grown);
    for (const m of [a, b, c]) await m.close();
  });

  it("holds 1,000 writable sessions in a process limited to 512 descriptors", async () => {
    const root = tempDir();
    const script = join(REPO_ROOT, "test/session/helpers/many-sessions-child.ts");
    const command = `ulimit -n 512 && exec "${process.execPath}" --import tsx "${script}" "${root}" 1000 3`;
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn("bash", ["-c", command], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "inherit"] });
      let text = "";
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (d) => (text += d));
      child.on("error", reject);
      child.on("close", () => resolve(text));
    });
    // Every session file holds its header and the three appended lines.
    expect(JSON.parse(out.trim().split("\n").pop()!)).toEqual({ ok: true, lines: [4] });
  }, 120_000);

  it("a round-robin over more sessions than the limit reopens only the sessions past limit - 1 each round", async () => {
    appendHandles.limit = 4;
    const root = tempDir();
    const sessions: SessionManager[] = [];
    for (let i = 0; i < 6; i++) sessions.push(await SessionManager.create(join(root, "p"), { root }));
    for (const [i, s] of sessions.entries()) s.appendMessage({ role: "user", content: `s${i} r0` });
    for (const [i, s] of sessions.entries()) s.appendMessage({ role: "user", content: `s${i} r1` });
    const opens = countSessionOpens();
    for (let r = 2; r < 6; r++) for (const [i, s] of sessions.entries()) s.appendMessage({ role: "user", content: `s${i} r${r}` });
    // Three of the six stay open; LRU reopened all six every round (24).
    expect(opens.count).toBe(4 * 3);
    for (const [i, s] of sessions.entries()) {
      const contents = lines(s.sessionFile!).map((l) => JSON.parse(l).message?.content);
      expect(contents).toEqual([undefined, ...Array.from({ length: 6 }, (_, r) => `s${i} r${r}`)]);
    }
    for (const s of sessions) await s.close();
  });

  it("an append that runs out of descriptors closes idle sessions' descriptors instead of failing", async () => {
    appendHandles.limit = 100;
    const root = tempDir();
    // A process with room for three session descriptors: the fourth open fails with EMFILE.
    limitDescriptors(3, (path) => path.endsWith(".jsonl"));
    const sessions: SessionManager[] = [];
    for (let i = 0; i < 5; i++) sessions.push(await SessionManager.create(join(root, "p"), { root }));
    for (let r = 0; r < 3; r++) for (const [i, s] of sessions.entries()) s.appendMessage({ role: "user", content: `s${i} r${r}` });
    expect(appendHandles.limit).toBeLessThanOrEqual(3);
    expect(openHandleCount()).toBeLessThanOrEqual(3);
    for (const [i, s] of sessions.entries()) {
      const contents = lines(s.sessionFile!).map((l) => JSON.parse(l).message?.content);
      expect(contents).toEqual([undefined, `s${i} r0`, `s${i} r1`, `s${i} r2`]);
    }
    for (const s of sessions) await s.close();
  });

  it("the limit is three quarters of the process's descriptor limit, 64 left at least", () => {
    const limits = [
      "Limit   Soft Limit   Hard Limit   Units",
      "Max open files            1024                 4096                 files",
    ].join("\n");
    expect(softDescriptorLimit(limits)).toBe(1024);
    expect(softDescriptorLimit("Max open files            unlimited            unlimited            files")).toBe(Number.POSITIVE_INFINITY);
    expect(softDescriptorLimit("Max processes 10 10")).toBeNull();
    expect(limitForDescriptors(1024)).toBe(768);
    expect(limitForDescriptors(128)).toBe(64);
    expect(limitForDescriptors(1_048_576)).toBe(4096);
    expect(limitForDescriptors(Number.POSITIVE_INFINITY)).toBe(4096);
  });

  it("an image append that runs out of descriptors for its blob closes idle sessions' descriptors instead of failing", async () => {
    appendHandles.limit = 100;
    const root = tempDir();
    // Room for four descriptors once the sessions are open: every later open past that fails with EMFILE.
    const limit = limitDescriptors(4, () => true);
    limit.on = false;
    const sessions: SessionManager[] = [];
    for (let i = 0; i < 4; i++) sessions.push(await SessionManager.create(join(root, "p"), { root }));
    limit.on = true;
    const png = Buffer.alloc(3000, 7);
    for (const [i, s] of sessions.entries()) {
      const data = Buffer.concat([png, Buffer.from([i])]).toString("base64");
      s.appendMessage({ role: "user", content: [{ type: "image", data, mimeType: "image/png" }] });
    }
    limit.on = false;
    for (const [i, s] of sessions.entries()) {
      const [, line] = lines(s.sessionFile!);
      const hash = createHash("sha256")
        .update(Buffer.concat([png, Buffer.from([i])]))
        .digest("hex");
      expect(JSON.parse(line!).message.content[0].data).toBe(`blob:sha256:${hash}`);
      expect(readFileSync(join(root, "blobs", hash))).toEqual(Buffer.concat([png, Buffer.from([i])]));
    }
    for (const s of sessions) await s.close();
  });
});
