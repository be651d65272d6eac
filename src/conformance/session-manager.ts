import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import type { StoreWarning } from "../errors.ts";
import { SessionManager } from "../session/session-manager.ts";
import {
  assistant,
  type ConformanceBackend,
  ids,
  refOf,
  type Register,
  rejectsWithCode,
  throwsWithCode,
  user,
  withImage,
} from "./harness.ts";
import { conformancePng as makePng } from "./png.ts";

/** The core behaviours: write, reopen, lock, list, resolve, fork, move, artifacts, deferral, gc, where data goes. */
export function sessionManagerBehaviours(test: Register, backend: ConformanceBackend): void {
  test("appends, persists and reopens the same tree, ids and images", async () => {
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
    assert.equal(again.sessionId, m.sessionId);
    assert.equal(again.cwd, "/work/a");
    assert.deepEqual(ids(again.getEntries()), ids(written));
    const image = (again.getEntry(i)!.message as { content: Array<{ data?: string }> }).content[1]!;
    assert.equal(image.data, png.toString("base64"));
    assert.equal(again.getTree().length, 1);
    assert.deepEqual(
      again.buildContext().messages.map((msg) => msg.role),
      ["user", "assistant"],
    );
    await again.close();
  });

  test("keeps images out of the transcript: the store holds the blob, a lazy open holds the ref", async () => {
    const options = await backend.options();
    const png = makePng(64, 64, 9);
    const m = await SessionManager.create("/work/b", options);
    const i = m.appendMessage(withImage(png));
    await m.close();
    const lazy = await SessionManager.open(refOf(m), { ...options, rehydrate: "lazy", readOnly: true });
    const data = (lazy.getEntry(i)!.message as { content: Array<{ data?: string }> }).content[1]!.data!;
    assert.match(data, /^blob:sha256:[0-9a-f]{64}$/);
    assert.equal(await lazy.blobs.has(data), true);
    assert.equal((await lazy.blobs.get(data))!.equals(png), true);
    const context = lazy.buildContext({ rehydrate: true });
    assert.ok(JSON.stringify(context.messages).includes(png.toString("base64").slice(0, 100)));
    await lazy.close();
  });

  test("has one writer: a second writable open is SESSION_LOCKED, a read-only open works, close frees it", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/work/c", options);
    m.appendMessage(user("one"));
    await m.flush();
    await rejectsWithCode(SessionManager.open(refOf(m), options), "SESSION_LOCKED");
    const reader = await SessionManager.open(refOf(m), { ...options, readOnly: true });
    assert.equal(reader.getEntries().length, 1);
    throwsWithCode(() => reader.appendMessage(user("no")), "READ_ONLY");
    await reader.close();
    await m.close();
    const next = await SessionManager.open(refOf(m), options);
    next.appendMessage(user("two"));
    await next.close();
    const last = await SessionManager.open(refOf(m), { ...options, readOnly: true });
    assert.deepEqual(
      last.getEntries().map((e) => (e.message as { content: string }).content),
      ["one", "two"],
    );
    await last.close();
  });

  test("lists newest first by cwd and resolves an id prefix", async () => {
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
    assert.deepEqual(
      inX.map((s) => s.id),
      [b.sessionId, a.sessionId],
    );
    assert.equal(inX[0]!.firstMessage, "second in x");
    assert.equal(inX[0]!.messageCount, 2);
    assert.deepEqual((await SessionManager.listAll(options)).map((s) => s.id).sort(), [a, b, c].map((m) => m.sessionId).sort());
    const found = await SessionManager.resolve(c.sessionId.slice(0, 20), "/elsewhere", options);
    assert.equal(found.id, c.sessionId);
    const opened = await SessionManager.open(found.path, { ...options, readOnly: true });
    assert.equal(opened.sessionId, c.sessionId);
    await opened.close();
    await rejectsWithCode(SessionManager.resolve("ffffffff-no-such", "/work/x", options), "SESSION_NOT_FOUND");
  });

  test("forks the whole session or one branch; the source is unchanged", async () => {
    const options = await backend.options();
    const png = makePng(32, 32, 3);
    const m = await SessionManager.create("/work/f", options);
    const u = m.appendMessage(user("root"));
    const a1 = m.appendMessage(assistant("a1"));
    m.appendMessage(withImage(png));
    m.branch(u);
    m.appendMessage(assistant("a2"));
    const whole = await m.fork();
    assert.equal(whole.header.parentSession, m.sessionId);
    assert.deepEqual(ids(whole.getEntries()), ids(m.getEntries()));
    await whole.close();
    const branch = await m.fork({ atEntryId: a1, cwd: "/work/g" });
    assert.deepEqual(
      branch.getEntries().map((e) => e.id),
      [u, a1],
    );
    assert.equal(branch.cwd, "/work/g");
    await branch.close();
    const before = ids(m.getEntries());
    await m.close();

    const reopenedWhole = await SessionManager.open(refOf(whole), { ...options, readOnly: true });
    assert.deepEqual(ids(reopenedWhole.getEntries()), before);
    const img = reopenedWhole.getEntries().find((e) => JSON.stringify(e).includes("look"))!;
    assert.equal((img.message as { content: Array<{ data?: string }> }).content[1]!.data, png.toString("base64"));
    await reopenedWhole.close();
    const reopenedBranch = await SessionManager.open(refOf(branch), { ...options, readOnly: true });
    assert.deepEqual(
      reopenedBranch.getEntries().map((e) => e.id),
      [u, a1],
    );
    await reopenedBranch.close();
    const source = await SessionManager.open(refOf(m), { ...options, readOnly: true });
    assert.deepEqual(ids(source.getEntries()), before);
    await source.close();
    assert.deepEqual(
      (await SessionManager.list("/work/g", options)).map((s) => s.id),
      [branch.sessionId],
    );
  });

  test("moves a session to another cwd, all of it", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/work/old", options);
    m.appendMessage(user("move me"));
    m.artifacts!.save("tool output", { toolType: "bash" });
    await m.moveTo("/work/new");
    m.appendMessage(assistant("moved"));
    assert.equal(m.cwd, "/work/new");
    await m.close();
    assert.deepEqual(await SessionManager.list("/work/old", options), []);
    const [info] = await SessionManager.list("/work/new", options);
    assert.equal(info!.id, m.sessionId);
    const again = await SessionManager.open(info!.path, { ...options, readOnly: true });
    assert.equal(again.cwd, "/work/new");
    assert.equal(again.getEntries().length, 2);
    assert.deepEqual(
      again.artifacts!.list().map((a) => a.toolType),
      ["bash"],
    );
    await again.close();
  });

  test("keeps artifacts with their session, and a fork carries them", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/work/art", options);
    m.appendMessage(user("run it"));
    const ref = m.artifacts!.save("x".repeat(50_000), { toolType: "bash" });
    await m.flush();
    const fork = await m.fork();
    await m.close();
    for (const target of [refOf(m), refOf(fork)]) {
      const s = await SessionManager.open(target, { ...options, readOnly: true });
      assert.equal(s.artifacts!.getText(ref.id), "x".repeat(50_000));
      await s.close();
    }
    await fork.close();
  });

  test("writes nothing before the first assistant message with deferUntilAssistant", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/work/d", { ...options, deferUntilAssistant: true });
    m.appendMessage(user("pending"));
    await m.flush();
    assert.deepEqual(await SessionManager.list("/work/d", options), []);
    m.appendMessage(assistant("now"));
    await m.close();
    const [info] = await SessionManager.list("/work/d", options);
    const again = await SessionManager.open(info!.path, { ...options, readOnly: true });
    assert.deepEqual(
      again.getEntries().map((e) => e.type),
      ["message", "message"],
    );
    await again.close();
  });

  test("gc deletes only blobs no session references", async () => {
    const options = await backend.options();
    const kept = makePng(40, 40, 1);
    const m = await SessionManager.create("/work/gc", options);
    m.appendMessage(withImage(kept));
    await m.close();
    const orphan = await m.blobs.put(makePng(40, 40, 2));
    const report = await SessionManager.gc({ ...options, graceMs: 0 });
    assert.deepEqual(report.deleted, [orphan.hash]);
    const again = await SessionManager.open(refOf(m), { ...options, readOnly: true });
    assert.ok(JSON.stringify(again.getEntries()).includes(kept.toString("base64").slice(0, 100)));
    await again.close();
  });

  test("a backend given as `store` writes nothing under the file root; the file tree only its two folders", async () => {
    const options = await backend.options();
    const warnings: StoreWarning[] = [];
    const m = await SessionManager.create("/work/z", { ...options, onWarning: (w) => warnings.push(w) });
    m.appendMessage(withImage(makePng(16, 16, 5)));
    await m.close();
    const written = readdirSync(options.root);
    if (options.store !== undefined) assert.deepEqual(written, []);
    else assert.deepEqual(written.sort(), ["blobs", "sessions"]);
    if (backend.sessionFiles) {
      assert.notEqual(m.sessionFile, null);
      assert.equal(m.location, m.sessionFile);
    } else {
      assert.equal(m.sessionFile, null);
      assert.match(m.location!, /#/);
    }
    assert.deepEqual(warnings, []);
  });
}
