import { readdirSync } from "node:fs";
import { expect, it } from "vitest";
import { type SessionEntry, SessionManager, type SessionManagerOptions, type StoreWarning } from "../../src/index.ts";
import { expectCode } from "../support/error-code.ts";
import { makePng } from "../support/png.ts";
import { describeBackends } from "./backends.ts";

const user = (text: string) => ({ role: "user", content: text, timestamp: 1 });
const assistant = (text: string) => ({ role: "assistant", content: [{ type: "text", text }], timestamp: 2 });
const withImage = (png: Buffer) => ({
  role: "user",
  content: [
    { type: "text", text: "look" },
    { type: "image", data: png.toString("base64"), mimeType: "image/png" },
  ],
  timestamp: 3,
});

/** Where a session can be opened again: its file, or its id in a database. */
const refOf = (m: SessionManager) => m.sessionFile ?? m.sessionId;
const ids = (entries: SessionEntry[]) => entries.map((e) => [e.id, e.parentId, e.type]);

describeBackends("SessionManager conformance", (backend) => {
  it("appends, persists and reopens the same tree, ids and images", async () => {
    const options = await backend.options();
    const png = makePng(64, 64, 7);
    const m = await SessionManager.create("/work/a", options);
    const u = m.appendMessage(user("hello"));
    m.appendMessage(assistant("hi"));
    m.appendModelChange({ provider: "p", id: "m" });
    const i = m.appendMessage(withImage(png));
    m.branch(u);
    m.appendMessage(assistant("another branch"));
    const written = m.getEntries();
    await m.flush();
    await m.close();

    const again = await SessionManager.open(refOf(m), options);
    expect(again.sessionId).toBe(m.sessionId);
    expect(again.cwd).toBe("/work/a");
    expect(ids(again.getEntries())).toEqual(ids(written));
    const image = (again.getEntry(i)!.message as { content: Array<{ data?: string }> }).content[1]!;
    expect(image.data).toBe(png.toString("base64"));
    expect(again.getTree()).toHaveLength(1);
    expect(again.buildContext().messages.map((msg) => msg.role)).toEqual(["user", "assistant"]);
    await again.close();
  });

  it("keeps images out of the transcript: the store holds the blob, a lazy open holds the ref", async () => {
    const options = await backend.options();
    const png = makePng(64, 64, 9);
    const m = await SessionManager.create("/work/b", options);
    const i = m.appendMessage(withImage(png));
    await m.close();
    const lazy = await SessionManager.open(refOf(m), { ...options, rehydrate: "lazy", readOnly: true });
    const data = (lazy.getEntry(i)!.message as { content: Array<{ data?: string }> }).content[1]!.data!;
    expect(data).toMatch(/^blob:sha256:[0-9a-f]{64}$/);
    expect(await lazy.blobs.has(data)).toBe(true);
    expect((await lazy.blobs.get(data))!.equals(png)).toBe(true);
    const context = lazy.buildContext({ rehydrate: true });
    expect(JSON.stringify(context.messages)).toContain(png.toString("base64").slice(0, 100));
    await lazy.close();
  });

  it("has one writer: a second writable open is SESSION_LOCKED, a read-only open works, close frees it", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/work/c", options);
    m.appendMessage(user("one"));
    await m.flush();
    await expectCode(SessionManager.open(refOf(m), options), "SESSION_LOCKED");
    const reader = await SessionManager.open(refOf(m), { ...options, readOnly: true });
    expect(reader.getEntries()).toHaveLength(1);
    expect(() => reader.appendMessage(user("no"))).toThrowError(expect.objectContaining({ code: "READ_ONLY" }));
    await reader.close();
    await m.close();
    const next = await SessionManager.open(refOf(m), options);
    next.appendMessage(user("two"));
    await next.close();
    const last = await SessionManager.open(refOf(m), { ...options, readOnly: true });
    expect(last.getEntries().map((e) => (e.message as { content: string }).content)).toEqual(["one", "two"]);
    await last.close();
  });

  it("lists newest first by cwd and resolves an id prefix", async () => {
    const options = await backend.options();
    let t = Date.parse("2026-01-01T00:00:00Z");
    const tick = () => {
      t += 60_000;
      return new Date(t);
    };
    const clock = { ...options, now: tick };
    const a = await SessionManager.create("/work/x", clock);
    a.appendMessage(user("first in x"));
    await a.close();
    const b = await SessionManager.create("/work/x", clock);
    b.appendMessage(user("second in x"));
    b.appendMessage(assistant("ok"));
    await b.close();
    const c = await SessionManager.create("/work/y", clock);
    c.appendMessage(user("in y"));
    await c.close();

    const inX = await SessionManager.list("/work/x", options);
    expect(inX.map((s) => s.id)).toEqual([b.sessionId, a.sessionId]);
    expect(inX[0]!.firstMessage).toBe("second in x");
    expect(inX[0]!.messageCount).toBe(2);
    expect((await SessionManager.listAll(options)).map((s) => s.id).sort()).toEqual([a, b, c].map((m) => m.sessionId).sort());
    const found = await SessionManager.resolve(c.sessionId.slice(0, 20), "/elsewhere", options);
    expect(found.id).toBe(c.sessionId);
    const opened = await SessionManager.open(found.path, { ...options, readOnly: true });
    expect(opened.sessionId).toBe(c.sessionId);
    await opened.close();
    await expectCode(SessionManager.resolve("ffffffff-no-such", "/work/x", options), "SESSION_NOT_FOUND");
  });

  it("forks the whole session or one branch; the source is unchanged", async () => {
    const options = await backend.options();
    const png = makePng(32, 32, 3);
    const m = await SessionManager.create("/work/f", options);
    const u = m.appendMessage(user("root"));
    const a1 = m.appendMessage(assistant("a1"));
    m.appendMessage(withImage(png));
    m.branch(u);
    m.appendMessage(assistant("a2"));
    const whole = await m.fork();
    expect(whole.header.parentSession).toBe(m.sessionId);
    expect(ids(whole.getEntries())).toEqual(ids(m.getEntries()));
    await whole.close();
    const branch = await m.fork({ atEntryId: a1, cwd: "/work/g" });
    expect(branch.getEntries().map((e) => e.id)).toEqual([u, a1]);
    expect(branch.cwd).toBe("/work/g");
    await branch.close();
    const before = ids(m.getEntries());
    await m.close();

    const reopenedWhole = await SessionManager.open(refOf(whole), { ...options, readOnly: true });
    expect(ids(reopenedWhole.getEntries())).toEqual(before);
    const img = reopenedWhole.getEntries().find((e) => JSON.stringify(e).includes("look"))!;
    expect((img.message as { content: Array<{ data?: string }> }).content[1]!.data).toBe(png.toString("base64"));
    await reopenedWhole.close();
    const reopenedBranch = await SessionManager.open(refOf(branch), { ...options, readOnly: true });
    expect(reopenedBranch.getEntries().map((e) => e.id)).toEqual([u, a1]);
    await reopenedBranch.close();
    const source = await SessionManager.open(refOf(m), { ...options, readOnly: true });
    expect(ids(source.getEntries())).toEqual(before);
    await source.close();
    expect((await SessionManager.list("/work/g", options)).map((s) => s.id)).toEqual([branch.sessionId]);
  });

  it("moves a session to another cwd, all of it", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/work/old", options);
    m.appendMessage(user("move me"));
    m.artifacts!.save("tool output", { toolType: "bash" });
    await m.moveTo("/work/new");
    m.appendMessage(assistant("moved"));
    expect(m.cwd).toBe("/work/new");
    await m.close();
    expect(await SessionManager.list("/work/old", options)).toEqual([]);
    const [info] = await SessionManager.list("/work/new", options);
    expect(info!.id).toBe(m.sessionId);
    const again = await SessionManager.open(info!.path, { ...options, readOnly: true });
    expect(again.cwd).toBe("/work/new");
    expect(again.getEntries()).toHaveLength(2);
    expect(again.artifacts!.list().map((a) => a.toolType)).toEqual(["bash"]);
    await again.close();
  });

  it("keeps artifacts with their session, and a fork carries them", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/work/art", options);
    m.appendMessage(user("run it"));
    const ref = m.artifacts!.save("x".repeat(50_000), { toolType: "bash" });
    await m.flush();
    const fork = await m.fork();
    await m.close();
    for (const target of [refOf(m), refOf(fork)]) {
      const s = await SessionManager.open(target, { ...options, readOnly: true });
      expect(s.artifacts!.getText(ref.id)).toBe("x".repeat(50_000));
      await s.close();
    }
    await fork.close();
  });

  it("writes nothing before the first assistant message with deferUntilAssistant", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/work/d", { ...options, deferUntilAssistant: true });
    m.appendMessage(user("pending"));
    await m.flush();
    expect(await SessionManager.list("/work/d", options)).toEqual([]);
    m.appendMessage(assistant("now"));
    await m.close();
    const [info] = await SessionManager.list("/work/d", options);
    const again = await SessionManager.open(info!.path, { ...options, readOnly: true });
    expect(again.getEntries().map((e) => e.type)).toEqual(["message", "message"]);
    await again.close();
  });

  it("gc deletes only blobs no session references", async () => {
    const options: SessionManagerOptions = await backend.options();
    const kept = makePng(40, 40, 1);
    const m = await SessionManager.create("/work/gc", options);
    m.appendMessage(withImage(kept));
    await m.close();
    const orphan = await m.blobs.put(makePng(40, 40, 2));
    const report = await SessionManager.gc({ ...options, graceMs: 0 });
    expect(report.deleted).toEqual([orphan.hash]);
    const again = await SessionManager.open(refOf(m), { ...options, readOnly: true });
    expect(JSON.stringify(again.getEntries())).toContain(kept.toString("base64").slice(0, 100));
    await again.close();
  });

  it("database sessions write nothing under the file root", async () => {
    const options = await backend.options();
    const warnings: StoreWarning[] = [];
    const m = await SessionManager.create("/work/z", { ...options, onWarning: (w) => warnings.push(w) });
    m.appendMessage(withImage(makePng(16, 16, 5)));
    await m.close();
    const written = readdirSync(options.root!);
    if (backend.name === "postgres") {
      expect(written).toEqual([]);
      expect(m.sessionFile).toBeNull();
      expect(m.location).toMatch(/#/);
    } else {
      expect(written.sort()).toEqual(["blobs", "sessions"]);
      expect(m.location).toBe(m.sessionFile);
    }
    expect(warnings).toEqual([]);
  });
});
