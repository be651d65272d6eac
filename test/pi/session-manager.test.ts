import { existsSync, readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/pi/index.ts";
import { piDirName } from "../support/pi-tree.ts";
import { assistant, linesOf, piHome, user } from "./helpers.ts";

describe("pi facade: create, deferred writing, appends", () => {
  it("creates a session in pi's --<cwd>-- dir and writes nothing until the first user message (pi 1.5.2)", () => {
    const h = piHome();
    const sm = SessionManager.create(h.cwd, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    const file = sm.getSessionFile()!;
    expect(sm.getSessionDir()).toBe(join(h.agentDir, "sessions", piDirName(h.cwd)));
    expect(dirname(file)).toBe(sm.getSessionDir());
    expect(basename(file)).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d-\\d{3}Z_${sm.getSessionId()}\\.jsonl$`));
    expect(sm.isPersisted()).toBe(true);
    expect(sm.getCwd()).toBe(h.cwd);
    const t = sm.appendThinkingLevelChange("high");
    const s = sm.appendMessage({ role: "system", content: "be brief", timestamp: 0 });
    expect(existsSync(file)).toBe(false);
    const u = sm.appendMessage(user("hi"));
    expect(linesOf(file).map((l) => (l.type === "session" ? "session" : l.id))).toEqual(["session", t, s, u]);
    const a = sm.appendMessage(assistant("hello"));
    const lines = linesOf(file);
    expect(lines[0]).toEqual({ type: "session", version: 3, id: sm.getSessionId(), timestamp: sm.getHeader()!.timestamp, cwd: h.cwd });
    expect(lines.slice(1).map((l) => [l.type, l.id, l.parentId])).toEqual([
      ["thinking_level_change", t, null],
      ["message", s, t],
      ["message", u, s],
      ["message", a, u],
    ]);
    expect(u).toMatch(/^[0-9a-f]{8}$/);
    const m = sm.appendModelChange("openai", "gpt-5");
    expect(linesOf(file).at(-1)).toMatchObject({ type: "model_change", id: m, parentId: a, provider: "openai", modelId: "gpt-5" });
    sm.close();
  });

  it("writes every entry kind with pi's fields, and the leaf follows each append", () => {
    const h = piHome();
    const sm = SessionManager.create(h.cwd, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    const u = sm.appendMessage(user("hi"));
    const a = sm.appendMessage(assistant("hey"));
    const c = sm.appendCompaction("sum", u, 1234, { k: 1 }, true);
    const ce = sm.appendCustomEntry("ext", { state: 2 });
    const cm = sm.appendCustomMessageEntry("ext", "injected", false, { d: 1 });
    const si = sm.appendSessionInfo("  My session  ");
    const lb = sm.appendLabelChange(u, "start");
    expect(sm.getLeafId()).toBe(lb);
    expect(sm.getLeafEntry()).toEqual(sm.getEntry(lb));
    const lines = linesOf(sm.getSessionFile()!);
    expect(lines.slice(3)).toEqual([
      {
        type: "compaction",
        id: c,
        parentId: a,
        timestamp: expect.any(String),
        summary: "sum",
        firstKeptEntryId: u,
        tokensBefore: 1234,
        details: { k: 1 },
        fromHook: true,
      },
      { type: "custom", customType: "ext", data: { state: 2 }, id: ce, parentId: c, timestamp: expect.any(String) },
      {
        type: "custom_message",
        customType: "ext",
        content: "injected",
        display: false,
        details: { d: 1 },
        id: cm,
        parentId: ce,
        timestamp: expect.any(String),
      },
      { type: "session_info", id: si, parentId: cm, timestamp: expect.any(String), name: "My session" },
      { type: "label", id: lb, parentId: si, timestamp: expect.any(String), targetId: u, label: "start" },
    ]);
    expect(sm.getSessionName()).toBe("My session");
    sm.appendSessionInfo("   ");
    expect(sm.getSessionName()).toBeUndefined();
    expect(
      sm
        .getEntries()
        .map((e) => e.id)
        .slice(0, 2),
    ).toEqual([u, a]);
    sm.close();
  });

  it("labels: getLabel, clearing with undefined or '', getTree's label and labelTimestamp; unknown targets throw", () => {
    const sm = SessionManager.inMemory("/x");
    const u = sm.appendMessage(user("a"));
    sm.appendLabelChange(u, "L1");
    expect(sm.getLabel(u)).toBe("L1");
    const tree = sm.getTree();
    expect(tree[0]!.label).toBe("L1");
    expect(tree[0]!.labelTimestamp).toBe(sm.getLeafEntry()!.timestamp);
    sm.appendLabelChange(u, "");
    expect(sm.getLabel(u)).toBeUndefined();
    sm.appendLabelChange(u, "L2");
    sm.appendLabelChange(u, undefined);
    expect(sm.getLabel(u)).toBeUndefined();
    expect(() => sm.appendLabelChange("nope", "x")).toThrow("Entry nope not found");
    expect(sm.getEntries()).toHaveLength(5);
  });
});

describe("pi facade: tree navigation", () => {
  it("branch, resetLeaf, branchWithSummary, getBranch, getChildren, getTree and buildSessionContext", () => {
    const sm = SessionManager.inMemory("/x");
    const u1 = sm.appendMessage(user("one"));
    const a1 = sm.appendMessage(assistant("two"));
    const u2 = sm.appendMessage(user("three"));
    sm.branch(u1);
    const a2 = sm.appendMessage(assistant("alt"));
    expect(sm.getEntry(a2)!.parentId).toBe(u1);
    expect(sm.getChildren(u1).map((e) => e.id)).toEqual([a1, a2]);
    expect(sm.getBranch().map((e) => e.id)).toEqual([u1, a2]);
    expect(sm.getBranch(u2).map((e) => e.id)).toEqual([u1, a1, u2]);
    expect(sm.getBranch("unknown")).toEqual([]);
    const tree = sm.getTree();
    expect(tree).toHaveLength(1);
    expect(tree[0]!.children.map((n) => n.entry.id)).toEqual([a1, a2]);
    expect(sm.buildSessionContext().messages.map((m) => m.content)).toEqual(["one", [{ type: "text", text: "alt" }]]);

    // pi 1.5.2: fromId names the leaf of the path left behind (a2), not the branch point.
    const bs = sm.branchWithSummary(u1, "tried alt", { why: 1 }, false);
    expect(sm.getEntry(bs)).toMatchObject({
      type: "branch_summary",
      parentId: u1,
      fromId: a2,
      summary: "tried alt",
      details: { why: 1 },
      fromHook: false,
    });
    const ctx = sm.buildSessionContext();
    expect(ctx.messages.at(-1)).toEqual({
      role: "branchSummary",
      summary: "tried alt",
      fromId: a2,
      timestamp: new Date(sm.getEntry(bs)!.timestamp).getTime(),
    });
    const root = sm.branchWithSummary(null, "from scratch");
    expect(sm.getEntry(root)).toMatchObject({ parentId: null, fromId: bs });
    sm.resetLeaf();
    const fromNothing = sm.branchWithSummary(null, "no leaf before");
    expect(sm.getEntry(fromNothing)).toMatchObject({ parentId: null, fromId: "root" });
    expect(() => sm.branch("missing")).toThrow("Entry missing not found");
    expect(() => sm.branchWithSummary("missing", "s")).toThrow("Entry missing not found");

    sm.resetLeaf();
    expect(sm.getLeafId()).toBeNull();
    expect(sm.getLeafEntry()).toBeUndefined();
    expect(sm.buildSessionContext()).toEqual({ messages: [], thinkingLevel: "off", model: null });
    const newRoot = sm.appendMessage(user("again"));
    expect(sm.getEntry(newRoot)!.parentId).toBeNull();
    expect(sm.getTree().length).toBe(4);
  });
});

describe("pi facade: sessions on disk", () => {
  it("open resumes a file: same ids, leaf, labels, name; appends continue it; cwdOverride and sessionDir apply", () => {
    const h = piHome();
    const opts = { agentDir: h.agentDir, blobsDir: h.blobsDir };
    const sm = SessionManager.create(h.cwd, undefined, opts);
    const u = sm.appendMessage(user("q"));
    sm.appendMessage(assistant("r"));
    sm.appendLabelChange(u, "here");
    sm.appendSessionInfo("named");
    const file = sm.getSessionFile()!;
    const before = sm.getEntries();
    sm.close();

    const again = SessionManager.open(file, undefined, undefined, opts);
    expect(again.getSessionId()).toBe(sm.getSessionId());
    expect(again.getEntries()).toEqual(before);
    expect(again.getLeafId()).toBe(before.at(-1)!.id);
    expect(again.getLabel(u)).toBe("here");
    expect(again.getSessionName()).toBe("named");
    expect(again.getCwd()).toBe(h.cwd);
    expect(again.getSessionDir()).toBe(dirname(file));
    const next = again.appendMessage(user("more"));
    expect(linesOf(file).at(-1)).toMatchObject({ id: next, parentId: before.at(-1)!.id });
    again.close();

    const other = join(h.base, "elsewhere");
    const overridden = SessionManager.open(file, other, "/some/cwd", opts);
    expect(overridden.getCwd()).toBe("/some/cwd");
    expect(overridden.getSessionDir()).toBe(other);
    expect(overridden.newSession()!.startsWith(`${other}/`)).toBe(true);
    overridden.close();
  });

  it("newSession and setSessionFile switch sessions; an absent file becomes a new session written there", () => {
    const h = piHome();
    const opts = { agentDir: h.agentDir, blobsDir: h.blobsDir };
    const sm = SessionManager.create(h.cwd, undefined, opts);
    sm.appendMessage(user("1"));
    sm.appendMessage(assistant("2"));
    const first = sm.getSessionFile()!;
    const firstId = sm.getSessionId();
    const path = sm.newSession({ id: "custom-id", parentSession: first });
    expect(sm.getSessionId()).toBe("custom-id");
    expect(path).toBe(sm.getSessionFile());
    expect(path!.endsWith("_custom-id.jsonl")).toBe(true);
    expect(sm.getEntries()).toEqual([]);
    expect(sm.getHeader()).toMatchObject({ id: "custom-id", parentSession: first, cwd: h.cwd, version: 3 });
    sm.setSessionFile(first);
    expect(sm.getSessionId()).toBe(firstId);
    expect(sm.getEntries()).toHaveLength(2);

    const explicit = join(h.base, "explicit", "s.jsonl");
    sm.setSessionFile(explicit);
    expect(sm.getSessionFile()).toBe(explicit);
    expect(sm.getEntries()).toEqual([]);
    sm.appendMessage(user("x"));
    sm.appendMessage(assistant("y"));
    expect(linesOf(explicit).map((l) => l.type)).toEqual(["session", "message", "message"]);
    sm.close();
  });

  it("createBranchedSession keeps root → leaf and its labels in a new file naming the old one", () => {
    const h = piHome();
    const sm = SessionManager.create(h.cwd, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    const u1 = sm.appendMessage(user("1"));
    const a1 = sm.appendMessage(assistant("2"));
    sm.appendLabelChange(u1, "keep");
    const off = sm.appendMessage(user("off path"));
    sm.appendLabelChange(off, "dropped");
    const old = sm.getSessionFile()!;
    const created = sm.createBranchedSession(a1)!;
    expect(created).toBe(sm.getSessionFile());
    expect(created).not.toBe(old);
    const lines = linesOf(created);
    expect(lines[0]).toMatchObject({ type: "session", parentSession: old, id: sm.getSessionId() });
    expect(
      lines
        .slice(1)
        .map((l) => l.id)
        .slice(0, 2),
    ).toEqual([u1, a1]);
    expect(lines[3]).toMatchObject({ type: "label", targetId: u1, label: "keep", parentId: a1 });
    expect(lines).toHaveLength(4);
    expect(sm.getLabel(u1)).toBe("keep");
    expect(sm.getLabel(off)).toBeUndefined();
    expect(() => sm.createBranchedSession("nope")).toThrow("Entry nope not found");
    sm.close();

    const mem = SessionManager.inMemory("/x");
    const m1 = mem.appendMessage(user("1"));
    expect(mem.createBranchedSession(m1)).toBeUndefined();
    expect(mem.getHeader()!.parentSession).toBeUndefined();
    expect(mem.getEntries().map((e) => e.id)).toEqual([m1]);
  });

  it("continueRecent resumes the most recently modified session of the cwd, else starts one", () => {
    const h = piHome();
    const opts = { agentDir: h.agentDir, blobsDir: h.blobsDir };
    const none = SessionManager.continueRecent(h.cwd, undefined, opts);
    expect(none.getEntries()).toEqual([]);
    none.appendMessage(user("a"));
    none.appendMessage(assistant("b"));
    none.close();
    const resumed = SessionManager.continueRecent(h.cwd, undefined, opts);
    expect(resumed.getSessionId()).toBe(none.getSessionId());
    expect(resumed.getEntries()).toHaveLength(2);
    resumed.close();
  });

  it("forkFrom copies a session into another cwd at once, parentSession = the source path; the source is untouched", () => {
    const h = piHome();
    const opts = { agentDir: h.agentDir, blobsDir: h.blobsDir };
    const sm = SessionManager.create(h.cwd, undefined, opts);
    sm.appendMessage(user("only a user message"));
    sm.appendMessage(assistant("ok"));
    const source = sm.getSessionFile()!;
    const sourceLines = linesOf(source);
    const target = join(h.base, "target");
    // The source stays locked by its live writer: forking only reads it.
    const fork = SessionManager.forkFrom(source, target, undefined, opts);
    expect(fork.getSessionDir()).toBe(join(h.agentDir, "sessions", piDirName(target)));
    expect(fork.getCwd()).toBe(target);
    const lines = linesOf(fork.getSessionFile()!);
    expect(lines[0]).toMatchObject({ type: "session", cwd: target, parentSession: source });
    expect(lines.slice(1)).toEqual(sourceLines.slice(1));
    expect(linesOf(source)).toEqual(sourceLines);
    expect(() => SessionManager.forkFrom(join(h.base, "absent.jsonl"), target, undefined, opts)).toThrow(
      expect.objectContaining({ code: "SESSION_NOT_FOUND" }),
    );
    fork.close();
    sm.close();
  });

  it("list and listAll report pi's session info, newest activity first, with progress", async () => {
    const h = piHome();
    const opts = { agentDir: h.agentDir, blobsDir: h.blobsDir };
    const a = SessionManager.create(h.cwd, undefined, opts);
    a.appendMessage({
      role: "user",
      content: [
        { type: "text", text: "first" },
        { type: "text", text: "question" },
      ],
      timestamp: 1000,
    });
    a.appendMessage({ ...assistant("answer"), timestamp: 2000 });
    a.appendSessionInfo("A");
    const b = SessionManager.create(join(h.base, "other"), undefined, opts);
    b.appendMessage({ ...user("later"), timestamp: 5000 });
    b.appendMessage({ ...assistant("x"), timestamp: 6000 });
    const progress: Array<[number, number]> = [];
    const listed = await SessionManager.list(h.cwd, undefined, (l, t) => progress.push([l, t]), opts);
    expect(listed).toEqual([
      {
        path: a.getSessionFile(),
        id: a.getSessionId(),
        cwd: h.cwd,
        name: "A",
        parentSessionPath: undefined,
        created: new Date(a.getHeader()!.timestamp),
        modified: new Date(2000),
        messageCount: 2,
        firstMessage: "first question",
        allMessagesText: "first question answer",
      },
    ]);
    expect(progress).toEqual([[1, 1]]);
    const all = await SessionManager.listAll(undefined, opts);
    expect(all.map((i) => i.id)).toEqual([b.getSessionId(), a.getSessionId()]);
    a.close();
    b.close();
  });

  it("inMemory writes nothing anywhere", () => {
    const h = piHome();
    const sm = SessionManager.inMemory(h.cwd, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    sm.appendMessage(user("a"));
    sm.appendMessage(assistant("b"));
    expect(sm.isPersisted()).toBe(false);
    expect(sm.getSessionFile()).toBeUndefined();
    expect(sm.getSessionDir()).toBe("");
    expect(existsSync(h.base) ? readdirSync(h.base) : []).toEqual([]);
  });
});
