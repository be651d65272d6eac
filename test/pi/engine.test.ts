import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionManager } from "../../src/pi/index.ts";
import { SessionManager as CoreSessionManager } from "../../src/session/session-manager.ts";
import { quarantinePathOf } from "../../src/session/paths.ts";
import type { StoreWarning } from "../../src/errors.ts";
import { blobDirEntries } from "../support/blob-dir.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { assistant, linesOf, piHome, user } from "./helpers.ts";
import { sha } from "../support/sha.ts";

const savedHome = process.env.TRANSCRIPT_STORE_HOME;
afterEach(() => {
  if (savedHome === undefined) delete process.env.TRANSCRIPT_STORE_HOME;
  else process.env.TRANSCRIPT_STORE_HOME = savedHome;
});

describe("pi facade on the engine", () => {
  it("images go to the engine's default blob dir; the main entry's open reads the session with no options", async () => {
    const h = piHome();
    const storeHome = tempDir();
    process.env.TRANSCRIPT_STORE_HOME = storeHome;
    const png = makePng(24, 24, 7).toString("base64");
    const hash = sha(Buffer.from(png, "base64"));
    const sm = SessionManager.create(h.cwd, undefined, { agentDir: h.agentDir });
    const u = sm.appendMessage({
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "image", data: png, mimeType: "image/png" },
      ],
    });
    sm.appendMessage(assistant("seen"));
    // In memory the image is as given, as in pi.
    expect((sm.getEntry(u) as any).message.content[1].data).toBe(png);
    const file = sm.getSessionFile()!;
    expect(linesOf(file)[1]!.message.content[1].data).toBe(`blob:sha256:${hash}`);
    expect(blobDirEntries(join(storeHome, "blobs"))).toEqual([hash]);
    sm.close();

    const core = await CoreSessionManager.open(file);
    expect((core.getEntry(u)!.message as any).content[1].data).toBe(png);
    await core.close();
    const reopened = SessionManager.open(file, undefined, undefined, { agentDir: h.agentDir });
    expect((reopened.getEntry(u) as any).message.content[1].data).toBe(png);
    reopened.close();
  });

  it("one writer per file in a process: a newer manager takes the file over at its first write, the older one turns read-only", () => {
    const h = piHome();
    const opts = { agentDir: h.agentDir, blobsDir: h.blobsDir };
    const sm = SessionManager.create(h.cwd, undefined, opts);
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    const file = sm.getSessionFile()!;
    // pi opens one file with several managers and never closes the older ones. Opening (reading)
    // does not disturb the writer.
    const second = SessionManager.open(file, undefined, undefined, opts);
    expect(second.getEntries().map((e) => e.id)).toEqual([a, b]);
    const c = sm.appendMessage(user("c, still from the first"));
    // The newer one writes: from now on it is the writer (its view is the file as it opened it, as in pi).
    const d = second.appendMessage(user("d, from the newer one"));
    const before = readFileSync(file, "utf8");
    expect(() => sm.appendMessage(user("from the older one"))).toThrow(expect.objectContaining({ code: "SESSION_LOCKED" }));
    // Refused before anything was written, and taken back from memory.
    expect(readFileSync(file, "utf8")).toBe(before);
    expect(sm.getLeafId()).toBe(c);
    expect(linesOf(file).map((l) => (l.type === "session" ? "session" : [l.id, l.parentId]))).toEqual([
      "session",
      [a, null],
      [b, a],
      [c, b],
      [d, b],
    ]);
    // Closing the older one does not release the newer one's lock.
    sm.close();
    expect(existsSync(`${file}.lock`)).toBe(true);
    second.appendMessage(assistant("still the writer"));
    second.close();
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("the first write of a new session never replaces a file another writer created at its path (pi: EEXIST)", () => {
    const h = piHome();
    const opts = { agentDir: h.agentDir, blobsDir: h.blobsDir };
    mkdirSync(h.base, { recursive: true });
    // Two managers of this process given the same absent path.
    const path = join(h.base, "same.jsonl");
    const a = SessionManager.open(path, undefined, undefined, opts);
    const b = SessionManager.open(path, undefined, undefined, opts);
    a.appendMessage(user("from a"));
    const written = readFileSync(path, "utf8");
    expect(() => b.appendMessage(user("from b"))).toThrow(expect.objectContaining({ code: "SESSION_EXISTS" }));
    expect(readFileSync(path, "utf8")).toBe(written);
    expect(b.getEntries()).toEqual([]);
    // a is still the writer.
    a.appendMessage(user("a again"));
    expect(linesOf(path)).toHaveLength(3);
    a.close();
    // Another process (pi, which takes no lock) created the file after this manager was given the path.
    const other = join(h.base, "other.jsonl");
    const c = SessionManager.open(other, undefined, undefined, opts);
    const foreign = '{"type":"session","version":3,"id":"foreign","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n';
    writeFileSync(other, foreign);
    expect(() => c.appendMessage(user("from c"))).toThrow(expect.objectContaining({ code: "SESSION_EXISTS" }));
    expect(readFileSync(other, "utf8")).toBe(foreign);
    c.close();
    b.close();
  });

  it("a file whose first line is not a session header is refused (BAD_HEADER) and left byte for byte", () => {
    const h = piHome();
    const path = join(h.base, "notes.jsonl");
    const bytes = '{"hello":"world"}\n{"type":"message"}\n';
    writeFileSync(path, bytes);
    expect(() => SessionManager.open(path, undefined, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir })).toThrow(
      expect.objectContaining({ code: "BAD_HEADER" }),
    );
    expect(readFileSync(path, "utf8")).toBe(bytes);
  });

  it("a malformed line is reported and kept in the file; a torn tail goes to quarantine before the next append", () => {
    const h = piHome();
    const warnings: StoreWarning[] = [];
    const opts = { agentDir: h.agentDir, blobsDir: h.blobsDir, onWarning: (w: StoreWarning) => void warnings.push(w) };
    const sm = SessionManager.create(h.cwd, undefined, opts);
    sm.appendMessage(user("a"));
    const a = sm.appendMessage(assistant("b"));
    const file = sm.getSessionFile()!;
    sm.close();
    appendFileSync(file, "this is not json\n");
    appendFileSync(file, '{"type":"message","id":"torn');
    const again = SessionManager.open(file, undefined, undefined, opts);
    expect(warnings.map((w) => w.code)).toEqual(expect.arrayContaining(["MALFORMED_LINES", "TORN_TAIL_REPAIRED"]));
    expect(again.getLeafId()).toBe(a);
    const next = again.appendMessage(user("c"));
    const text = readFileSync(file, "utf8");
    expect(text).toContain("this is not json\n");
    expect(text).not.toContain('"id":"torn');
    expect(readFileSync(quarantinePathOf(file), "utf8")).toContain("torn");
    expect(JSON.parse(text.trim().split("\n").at(-1)!)).toMatchObject({ id: next, parentId: a });
    again.close();
  });

  it("a legacy (v1) pi file is migrated on open and rewritten as v3 atomically", () => {
    const h = piHome();
    const path = join(h.base, "old.jsonl");
    writeFileSync(
      path,
      `${[
        { type: "session", id: "old-session", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/w" },
        { type: "message", timestamp: "2025-01-01T00:00:01.000Z", message: { role: "user", content: "hi" } },
        { type: "message", timestamp: "2025-01-01T00:00:02.000Z", message: { role: "hookMessage", content: "hook" } },
      ]
        .map((l) => JSON.stringify(l))
        .join("\n")}\n`,
    );
    const sm = SessionManager.open(path, undefined, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    const entries = sm.getEntries();
    expect(entries.map((e) => e.parentId)).toEqual([null, entries[0]!.id]);
    const lines = linesOf(path);
    expect(lines[0]).toMatchObject({ version: 3, id: "old-session" });
    expect(lines[2]!.message.role).toBe("custom");
    expect(lines.slice(1).map((l) => l.id)).toEqual(entries.map((e) => e.id));
    expect(readdirSync(h.base).filter((n) => n.includes(".tmp"))).toEqual([]);
    sm.close();
  });

  it("an empty file becomes a new session with its header written at once, as in pi", () => {
    const h = piHome();
    const path = join(h.base, "empty.jsonl");
    writeFileSync(path, "");
    const sm = SessionManager.open(path, undefined, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    expect(linesOf(path)).toEqual([sm.getHeader()]);
    expect(sm.getSessionFile()).toBe(path);
    sm.close();
  });

  it("resuming a written file without a conversation yet appends only what is missing (pi writes it all again)", () => {
    const h = piHome();
    const path = join(h.base, "empty.jsonl");
    writeFileSync(path, "");
    const sm = SessionManager.open(path, undefined, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    const m = sm.appendModelChange("p", "m");
    expect(linesOf(path)).toHaveLength(1);
    const u = sm.appendMessage(user("now"));
    expect(linesOf(path).map((l) => (l.type === "session" ? "session" : l.id))).toEqual(["session", m, u]);
    sm.close();
  });

  it("a parentId cycle does not hang getBranch or buildSessionContext", () => {
    const h = piHome();
    const path = join(h.base, "cycle.jsonl");
    const line = (id: string, parentId: string) => ({
      type: "message",
      id,
      parentId,
      timestamp: "2026-01-01T00:00:00.000Z",
      message: user(id),
    });
    writeFileSync(
      path,
      `${[
        { type: "session", version: 3, id: "c", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/" },
        line("aaaaaaaa", "bbbbbbbb"),
        line("bbbbbbbb", "aaaaaaaa"),
      ]
        .map((l) => JSON.stringify(l))
        .join("\n")}\n`,
    );
    const sm = SessionManager.open(path, undefined, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    expect(sm.getBranch().map((e) => e.id)).toEqual(["aaaaaaaa", "bbbbbbbb"]);
    expect(sm.buildSessionContext().messages).toHaveLength(2);
    sm.close();
  });

  it("an in-memory manager reads a file without locking or writing it, not even to repair or upgrade it", () => {
    const h = piHome();
    const sm = SessionManager.create(h.cwd, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    sm.appendMessage(user("a"));
    sm.appendMessage(assistant("b"));
    const file = sm.getSessionFile()!;
    appendFileSync(file, '{"type":"message","id":"torn');
    const bytes = readFileSync(file);
    // The live writer holds the lock: an in-memory reader does not need it.
    const mem = SessionManager.inMemory(h.cwd, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    mem.setSessionFile(file);
    expect(mem.getEntries()).toEqual(sm.getEntries());
    expect(mem.getSessionFile()).toBe(file);
    mem.appendMessage(user("only in memory"));
    expect(readFileSync(file).equals(bytes)).toBe(true);
    sm.close();
  });

  it("a failed append leaves the session as it was (no entry, same leaf)", () => {
    const h = piHome();
    const sm = SessionManager.create(h.cwd, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    sm.appendMessage(user("a"));
    const a = sm.appendMessage(assistant("b"));
    const cyclic: Record<string, unknown> = { role: "user" };
    cyclic.self = cyclic;
    expect(() => sm.appendMessage(cyclic as never)).toThrow(expect.objectContaining({ code: "PERSISTENCE_FAILED" }));
    expect(sm.getLeafId()).toBe(a);
    expect(sm.getEntries()).toHaveLength(2);
    sm.close();
  });
});
