import { mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager, type SessionEntry } from "../../src/pi/index.ts";
import { assistant, linesOf, piHome, user } from "./helpers.ts";

const usage = {
  input: 10,
  output: 5,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 15,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const system = (content: string, extra: Record<string, unknown> = {}) => ({ role: "system", content, timestamp: 7, ...extra });
const tool = (name: string) => ({ name, description: `${name} tool`, parameters: { type: "object", properties: {} } });

function store() {
  const h = piHome();
  return { h, opts: { agentDir: h.agentDir, blobsDir: h.blobsDir } };
}

describe("pi 1.5.2's new entries through the facade", () => {
  it("appendUsage writes a usage entry (any kind) that is no part of the context and returns it", () => {
    const { h, opts } = store();
    const sm = SessionManager.create(h.cwd, undefined, opts);
    sm.appendMessage(user("hi"));
    const entry = sm.appendUsage("cache_warm", "anthropic", "claude", usage, "warm-up");
    const bare = sm.appendUsage("some_future_kind", "p", "m", usage);
    expect(entry).toEqual({
      type: "usage",
      id: entry.id,
      parentId: expect.any(String),
      timestamp: expect.any(String),
      kind: "cache_warm",
      provider: "anthropic",
      model: "claude",
      usage,
      note: "warm-up",
    });
    expect("note" in bare).toBe(false);
    expect(sm.getLeafId()).toBe(bare.id);
    expect(sm.buildSessionContext().messages.map((m) => m.role)).toEqual(["user"]);
    expect(linesOf(sm.getSessionFile()!).slice(-2)).toEqual([JSON.parse(JSON.stringify(entry)), JSON.parse(JSON.stringify(bare))]);
    expect(sm.getEntryCount()).toBe(3);
    sm.close();
  });

  it("appendContextEdit: the latest edit on the branch wins, null omits the target, a string is a text block for assistant content", () => {
    const sm = SessionManager.inMemory("/x");
    const u = sm.appendMessage(user("original question"));
    const a = sm.appendMessage(assistant("original answer"));
    const e1 = sm.appendContextEdit(u, { content: "first edit" });
    const e2 = sm.appendContextEdit(u, { content: "second edit" });
    sm.appendContextEdit(a, { content: "short answer" });
    expect(sm.getEntry(e1)).toMatchObject({ type: "context_edit", targetId: u, replacement: { content: "first edit" } });
    const ctx = sm.buildSessionContext();
    expect(ctx.messages.map((m) => m.content)).toEqual(["second edit", [{ type: "text", text: "short answer" }]]);
    // The edit keeps the message's other fields.
    expect(ctx.messages[1]).toMatchObject({ role: "assistant", provider: "anthropic", model: "claude" });
    // The stored message itself is untouched (append-only).
    expect((sm.getEntry(u) as any).message.content).toBe("original question");
    const projection = sm.buildSessionProjection();
    expect(projection.entries.map((p) => [p.sourceEntry.id, p.messages.length])).toEqual([
      [u, 1],
      [a, 1],
      [e1, 0],
      [e2, 0],
      [sm.getLeafId(), 0],
    ]);
    sm.appendContextEdit(a, null);
    expect(sm.buildSessionContext().messages.map((m) => m.role)).toEqual(["user"]);
    // Branch-relative: on another branch from `a`'s parent the edits do not apply.
    sm.branch(a);
    expect(sm.buildSessionContext().messages.map((m) => m.content)).toEqual([
      "original question",
      [{ type: "text", text: "original answer" }],
    ]);
  });

  it("appendContextEdit refuses what pi refuses, writing nothing", () => {
    const sm = SessionManager.inMemory("/x");
    const u = sm.appendMessage(user("q"));
    const m = sm.appendModelChange("p", "m");
    const s = sm.appendMessage(system("prompt"));
    sm.branch(u);
    const other = sm.appendMessage(assistant("other branch"));
    sm.branch(s);
    const count = sm.getEntryCount();
    expect(() => sm.appendContextEdit("nope", null)).toThrow("Entry nope not found");
    expect(() => sm.appendContextEdit(other, null)).toThrow(`Entry ${other} is not on the active branch`);
    expect(() => sm.appendContextEdit(m, null)).toThrow(`Entry ${m} does not contribute editable model content`);
    expect(() => sm.appendContextEdit(s, null)).toThrow(`Entry ${s} does not contribute editable model content`);
    expect(() => sm.appendContextEdit(u, { content: 3 } as never)).toThrow(
      "Context edit replacement must be null or contain string/array content",
    );
    expect(() => sm.appendContextEdit(u, {} as never)).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    expect(sm.getEntryCount()).toBe(count);
  });

  it("system messages are context; a compaction records their sum (sections patched, tools added/removed) and replaces them", () => {
    const sm = SessionManager.inMemory("/x");
    sm.appendMessage(system("base prompt", { sections: { a: "<a>1</a>", b: "<b>1</b>" }, toolsAdded: [tool("read"), tool("bash")] }));
    const u1 = sm.appendMessage(user("one"));
    sm.appendMessage(assistant("two"));
    sm.appendMessage(
      system("more instructions", { sections: { a: "<a>2</a>", b: null }, toolsRemoved: [{ name: "bash" }], toolsAdded: [tool("write")] }),
    );
    const u2 = sm.appendMessage(user("three"));
    expect(sm.buildSessionContext().messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "system", "user"]);
    const c = sm.appendCompaction("summary", u1, 999, undefined, false, usage);
    const entry = sm.getEntry(c) as any;
    expect(entry.usage).toEqual(usage);
    expect(entry.systemMessage).toEqual({
      role: "system",
      content: "base prompt\n\nmore instructions",
      sections: { a: "<a>2</a>" },
      toolsAdded: [tool("read"), tool("write")],
      timestamp: new Date(entry.timestamp).getTime(),
    });
    // The compaction's system message, its summary, then the kept entries without system messages.
    const ctx = sm.buildSessionContext();
    expect(ctx.messages.map((m) => m.role)).toEqual(["system", "compactionSummary", "user", "assistant", "user"]);
    expect(sm.buildContextEntries().map((e) => e.id)).toEqual([c, u1, sm.getBranch()[2]!.id, u2]);
  });

  it("a retain-none compaction (firstKeptEntryId null) records its own id and keeps nothing before it", () => {
    const sm = SessionManager.inMemory("/x");
    sm.appendMessage(user("one"));
    sm.appendMessage(assistant("two"));
    const c = sm.appendCompaction("all summarized", null, 10);
    expect(sm.getEntry(c)).toMatchObject({ firstKeptEntryId: c });
    expect("systemMessage" in sm.getEntry(c)!).toBe(false);
    const after = sm.appendMessage(user("after"));
    expect(sm.buildContextEntries().map((e) => e.id)).toEqual([c, after]);
    expect(sm.buildSessionContext().messages.map((m) => m.role)).toEqual(["compactionSummary", "user"]);
  });

  it("an older compaction inside the newest one's kept range adds nothing; edits before that range are dropped", () => {
    const sm = SessionManager.inMemory("/x");
    const u1 = sm.appendMessage(user("one"));
    sm.appendContextEdit(u1, { content: "edited one" });
    const c1 = sm.appendCompaction("first", u1, 1);
    const u2 = sm.appendMessage(user("two"));
    sm.appendCompaction("second", c1, 2);
    const messages = sm.buildSessionContext().messages;
    expect(messages.map((m) => m.summary ?? m.content)).toEqual(["second", "two"]);
    expect(sm.buildSessionProjection().entries.find((p) => p.sourceEntry.id === c1)!.messages).toEqual([]);
    void u2;
  });

  it("branchWithSummary records the abandoned leaf as fromId and its usage", () => {
    const sm = SessionManager.inMemory("/x");
    const u = sm.appendMessage(user("q"));
    const a = sm.appendMessage(assistant("a"));
    const bs = sm.branchWithSummary(u, "left", undefined, undefined, usage);
    expect(sm.getEntry(bs)).toMatchObject({ parentId: u, fromId: a, usage });
  });
});

describe("pi 1.5.2's session API on the facade", () => {
  it("{ id } on create, newSession, inMemory and forkFrom, validated as pi does", () => {
    const { h, opts } = store();
    const sm = SessionManager.create(h.cwd, undefined, { ...opts, id: "my-session.1" });
    expect(sm.getSessionId()).toBe("my-session.1");
    expect(sm.getSessionFile()!.endsWith("_my-session.1.jsonl")).toBe(true);
    for (const bad of ["", "-x", "x-", "a/b", "a b", "..", "é"]) {
      expect(() => SessionManager.create(h.cwd, undefined, { ...opts, id: bad }), bad).toThrow(
        expect.objectContaining({ code: "INVALID_OPTION" }),
      );
      expect(() => sm.newSession({ id: bad }), bad).toThrow(/^Session id must be non-empty/);
      expect(() => SessionManager.inMemory("/x", { id: bad }), bad).toThrow(/^Session id must be non-empty/);
    }
    // A refused id leaves the manager's session as it was.
    expect(sm.getSessionId()).toBe("my-session.1");
    sm.appendMessage(user("q"));
    const fork = SessionManager.forkFrom(sm.getSessionFile()!, h.cwd, undefined, { ...opts, id: "forked" });
    expect(fork.getSessionId()).toBe("forked");
    expect(() => SessionManager.forkFrom(sm.getSessionFile()!, h.cwd, undefined, { ...opts, id: "bad id" })).toThrow(
      /^Session id must be non-empty/,
    );
    expect(SessionManager.inMemory("/x", { id: "mem" }).getSessionId()).toBe("mem");
    fork.close();
    sm.close();
  });

  it("inMemory(cwd, options, entries) takes a session held outside the file system (migrated), never writing", () => {
    const header = { type: "session" as const, version: 2, id: "held", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/else" };
    const entries: SessionEntry[] = [
      {
        type: "message",
        id: "a1",
        parentId: null,
        timestamp: "2026-01-01T00:00:01.000Z",
        message: { role: "hookMessage", content: "x", timestamp: 1 },
      },
      { type: "message", id: "a2", parentId: "a1", timestamp: "2026-01-01T00:00:02.000Z", message: user("y") },
    ];
    const sm = SessionManager.inMemory("/x", undefined, [header, ...entries]);
    expect(sm.getSessionId()).toBe("held");
    expect(sm.getLeafId()).toBe("a2");
    expect(sm.getHeader()!.version).toBe(3);
    expect((sm.getEntry("a1") as any).message.role).toBe("custom");
    expect(sm.isPersisted()).toBe(false);
    expect(sm.getSessionFile()).toBeUndefined();
    // Entries without a header join a new session.
    const loose = SessionManager.inMemory("/x", { id: "new-one" }, entries.slice(1));
    expect(loose.getSessionId()).toBe("new-one");
    expect(loose.getEntries().map((e) => e.id)).toEqual(["a2"]);
  });

  it("findById finds a session from its header; another dir's sessions count only for their cwd", () => {
    const { h, opts } = store();
    const sm = SessionManager.create(h.cwd, undefined, { ...opts, id: "find-me" });
    sm.appendMessage(user("q"));
    expect(SessionManager.findById(h.cwd, "find-me", undefined, opts)).toBe(sm.getSessionFile());
    expect(SessionManager.findById(h.cwd, "absent", undefined, opts)).toBeUndefined();
    const shared = join(h.base, "shared");
    const other = SessionManager.create("/somewhere/else", shared, { ...opts, id: "elsewhere" });
    other.appendMessage(user("q"));
    expect(SessionManager.findById(h.cwd, "elsewhere", shared, opts)).toBeUndefined();
    expect(SessionManager.findById("/somewhere/else", "elsewhere", shared, opts)).toBe(other.getSessionFile());
    other.close();
    sm.close();
  });

  it("continueRecent in a shared dir resumes only the cwd's own latest session", async () => {
    const { h, opts } = store();
    const shared = join(h.base, "shared");
    const mine = SessionManager.create(h.cwd, shared, opts);
    mine.appendMessage(user("mine"));
    mine.close();
    // "mine" is the older file by its mtime, set: not by a sleep the clock may not resolve
    const past = new Date(Date.now() - 60_000);
    utimesSync(mine.getSessionFile()!, past, past);
    const theirs = SessionManager.create("/other/cwd", shared, opts);
    theirs.appendMessage(user("theirs"));
    theirs.close();
    const resumed = SessionManager.continueRecent(h.cwd, shared, opts);
    expect(resumed.getSessionFile()).toBe(mine.getSessionFile());
    resumed.close();
    const listed = await SessionManager.list(h.cwd, shared, undefined, undefined, opts);
    expect(listed.map((s) => s.path)).toEqual([mine.getSessionFile()]);
    const all = await SessionManager.listAll(shared, undefined, undefined, opts);
    expect(all.map((s) => s.path).sort()).toEqual([mine.getSessionFile(), theirs.getSessionFile()].sort());
    const aborted = new AbortController();
    aborted.abort(new Error("stop"));
    await expect(SessionManager.list(h.cwd, shared, undefined, aborted.signal, opts)).rejects.toThrow("stop");
  });

  it("usesDefaultSessionDir, getEntryCount, appendSessionInfo with line breaks", () => {
    const { h, opts } = store();
    const sm = SessionManager.create(h.cwd, undefined, opts);
    expect(sm.usesDefaultSessionDir()).toBe(true);
    expect(SessionManager.create(h.cwd, join(h.base, "elsewhere"), opts).usesDefaultSessionDir()).toBe(false);
    expect(sm.getEntryCount()).toBe(0);
    sm.appendSessionInfo("  two\r\nlines\n ");
    expect(sm.getSessionName()).toBe("two lines");
    expect(sm.getEntryCount()).toBe(1);
  });

  it("a non-empty file that is no session is refused with pi's message and left as it is", () => {
    const { h, opts } = store();
    mkdirSync(h.base, { recursive: true });
    const path = join(h.base, "notes.jsonl");
    writeFileSync(path, "not json at all\n");
    expect(() => SessionManager.open(path, undefined, undefined, opts)).toThrow(`Session file is not a valid pi session: ${path}`);
    expect(() => SessionManager.inMemory("/x").setSessionFile(path)).toThrow(`Session file is not a valid pi session: ${path}`);
    expect(readFileSync(path, "utf8")).toBe("not json at all\n");
  });

  it("createBranchedSession re-chains the path around label entries and keeps compaction and context-edit targets valid", () => {
    const { h, opts } = store();
    const sm = SessionManager.create(h.cwd, undefined, opts);
    const u1 = sm.appendMessage(user("one"));
    const l1 = sm.appendLabelChange(u1, "start");
    const a1 = sm.appendMessage(assistant("two"));
    const l2 = sm.appendLabelChange(a1, "answer");
    const e = sm.appendContextEdit(u1, { content: "edited" });
    const c = sm.appendCompaction("sum", l2, 5);
    const u2 = sm.appendMessage(user("three"));
    const before = sm.buildSessionContext();
    const file = sm.createBranchedSession(u2)!;
    const lines = linesOf(file).slice(1);
    const ids = new Set(lines.map((l) => l.id));
    expect(lines.filter((l) => l.type !== "label").map((l) => [l.id, l.parentId])).toEqual([
      [u1, null],
      [a1, u1],
      [e, a1],
      [c, e],
      [u2, c],
    ]);
    // A label entry pointed at by firstKeptEntryId moves to the entry after it.
    expect(lines.find((l) => l.id === c)!.firstKeptEntryId).toBe(e);
    for (const l of lines) {
      if (l.parentId !== null) expect(ids.has(l.parentId), l.id).toBe(true);
      if (l.type === "label" || l.type === "context_edit") expect(ids.has(l.targetId), l.id).toBe(true);
    }
    expect(lines.filter((l) => l.type === "label").map((l) => [l.targetId, l.label])).toEqual([
      [u1, "start"],
      [a1, "answer"],
    ]);
    expect(ids.has(l1) || ids.has(l2)).toBe(false);
    expect(sm.buildSessionContext().messages).toEqual(before.messages);
    sm.close();
  });
});
