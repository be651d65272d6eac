import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { cwdBucket } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

function lines(path: string): Array<Record<string, unknown>> {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe("SessionManager basics", () => {
  it("creates a v3 session in the cwd bucket with private modes and appends synchronously", async () => {
    const root = tempDir();
    const cwd = join(root, "project");
    const m = await SessionManager.create(cwd, { root });
    expect(m.sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const file = m.sessionFile!;
    expect(dirname(file)).toBe(join(root, "sessions", cwdBucket(cwd)));
    expect(basename(file)).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d-\\d{3}Z_${m.sessionId}\\.jsonl$`));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    expect(m.artifactsDir).toBe(file.slice(0, -".jsonl".length));

    const u = m.appendMessage({ role: "user", content: "hi" });
    // synchronous: the bytes are in the file before the call returns
    expect(lines(file).at(-1)).toMatchObject({ type: "message", id: u, parentId: null, message: { role: "user", content: "hi" } });
    const a = m.appendMessage({ role: "assistant", content: [{ type: "text", text: "yo" }] });
    const mc = m.appendModelChange("anthropic/claude", "default");
    const tl = m.appendThinkingLevelChange("high");
    const cu = m.appendCustomEntry("my-ext", { n: 1 });
    const lb = m.appendLabelChange(u, "start");
    const any = m.appendEntry({ type: "x_future", payload: [1, 2] });
    const disk = lines(file);
    expect(disk[0]).toEqual({ type: "session", version: 3, id: m.sessionId, timestamp: m.header.timestamp, cwd });
    expect(disk.slice(1).map((e) => [e.type, e.id, e.parentId])).toEqual([
      ["message", u, null],
      ["message", a, u],
      ["model_change", mc, a],
      ["thinking_level_change", tl, mc],
      ["custom", cu, tl],
      ["label", lb, cu],
      ["x_future", any, lb],
    ]);
    expect(disk[3]).toMatchObject({ model: "anthropic/claude", role: "default" });
    expect(disk[7]).toMatchObject({ payload: [1, 2] });
    for (const e of disk.slice(1)) expect(e.id).toMatch(/^[0-9a-f]{8}$/);
    const ctx = m.buildContext();
    expect(ctx.model).toBe("anthropic/claude");
    expect(ctx.thinkingLevel).toBe("high");
    expect(ctx.messages.map((x) => x.role)).toEqual(["user", "assistant"]);
    await m.close();
  });

  it("navigates the tree: branch, getBranch, getTree, resetLeaf, branchWithSummary", async () => {
    const m = await SessionManager.create(tempDir(), { root: tempDir() });
    const a = m.appendMessage({ role: "user", content: "a" });
    const b = m.appendMessage({ role: "assistant", content: "b" });
    m.branch(a);
    const c = m.appendMessage({ role: "assistant", content: "c" });
    expect(m.getBranch().map((e) => e.id)).toEqual([a, c]);
    expect(m.getBranch(b).map((e) => e.id)).toEqual([a, b]);
    const tree = m.getTree();
    expect(tree).toHaveLength(1);
    expect(tree[0]!.children.map((n) => n.entry.id)).toEqual([b, c]);
    const s = m.branchWithSummary(b, "tried c, went back");
    expect(m.getEntry(s)).toMatchObject({ type: "branch_summary", fromId: b, parentId: b, summary: "tried c, went back" });
    expect(m.buildContext().messages.map((x) => x.role)).toEqual(["user", "assistant", "branchSummary"]);
    m.resetLeaf();
    const root2 = m.appendMessage({ role: "user", content: "new root" });
    expect(m.getEntry(root2)!.parentId).toBeNull();
    expect(m.getTree()).toHaveLength(2);
    expect(() => m.branch("deadbeef")).toThrow(expect.objectContaining({ code: "ENTRY_NOT_FOUND" }));
    expect(() => m.appendLabelChange("deadbeef", "x")).toThrow(expect.objectContaining({ code: "ENTRY_NOT_FOUND" }));
    expect(() => m.getBranch("deadbeef")).toThrow(expect.objectContaining({ code: "ENTRY_NOT_FOUND" }));
    await m.close();
    const reopened = await SessionManager.open(m.sessionFile!, { root: tempDir() });
    expect(reopened.getEntries()).toEqual(m.getEntries());
    expect(reopened.getLeafId()).toBe(root2);
    await reopened.close();
  });

  it("buildContext honours the latest compaction: summary, kept entries, then later ones", async () => {
    const m = await SessionManager.create(tempDir(), { root: tempDir() });
    const ids = ["1", "2", "3", "4"].map((t, i) => m.appendMessage({ role: i % 2 ? "assistant" : "user", content: t }));
    m.appendCompaction("first summary", ids[1]!, 100);
    m.appendMessage({ role: "user", content: "5" });
    m.appendCompaction("second summary", ids[3]!, 200, { files: ["a.ts"] });
    m.appendMessage({ role: "assistant", content: "6" });
    const ctx = m.buildContext();
    expect(ctx.messages[0]).toMatchObject({ role: "compactionSummary", summary: "second summary", tokensBefore: 200 });
    expect(ctx.messages.slice(1).map((x) => x.content)).toEqual(["4", "5", "6"]);
    expect(() => m.appendCompaction("x", "nope0000", 1)).toThrow(expect.objectContaining({ code: "ENTRY_NOT_FOUND" }));
    await m.close();
  });

  it("deferUntilAssistant writes no file before the first assistant message", async () => {
    const m = await SessionManager.create(tempDir(), { root: tempDir(), deferUntilAssistant: true });
    m.appendMessage({ role: "user", content: "q" });
    m.appendThinkingLevelChange("low");
    expect(existsSync(m.sessionFile!)).toBe(false);
    m.appendMessage({ role: "assistant", content: "a" });
    const disk = lines(m.sessionFile!);
    expect(disk.map((e) => e.type)).toEqual(["session", "message", "thinking_level_change", "message"]);
    m.appendMessage({ role: "user", content: "q2" });
    expect(lines(m.sessionFile!)).toHaveLength(5);
    await m.close();
  });

  it("inMemory sessions work without touching the disk", () => {
    const m = SessionManager.inMemory("/somewhere");
    const id = m.appendMessage({ role: "user", content: "x" });
    expect(m.getEntry(id)).toMatchObject({ message: { content: "x" } });
    expect(m.sessionFile).toBeNull();
    expect(m.artifacts).toBeNull();
  });

  it("readOnly opens refuse writes with READ_ONLY, as does a closed manager", async () => {
    const root = tempDir();
    const m = await SessionManager.create(tempDir(), { root });
    m.appendMessage({ role: "user", content: "x" });
    const ro = await SessionManager.open(m.sessionFile!, { root, readOnly: true });
    expect(() => ro.appendMessage({ role: "user", content: "y" })).toThrow(expect.objectContaining({ code: "READ_ONLY" }));
    expect(ro.getEntries()).toEqual(m.getEntries());
    await m.close();
    expect(() => m.appendMessage({ role: "user", content: "z" })).toThrow(expect.objectContaining({ code: "READ_ONLY" }));
  });

  it("validates options once with INVALID_OPTION", async () => {
    await expect(SessionManager.create(tempDir(), { rehydrate: "sometimes" as "lazy" })).rejects.toMatchObject({ code: "INVALID_OPTION" });
    await expect(SessionManager.create(tempDir(), { fsync: "yes" as unknown as boolean })).rejects.toMatchObject({
      code: "INVALID_OPTION",
    });
    await expect(SessionManager.create(tempDir(), { lockStaleMs: 10 })).rejects.toMatchObject({ code: "INVALID_OPTION" });
    const m = SessionManager.inMemory();
    expect(() => m.appendEntry({ type: "session" })).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    expect(() => m.appendMessage({ content: "no role" } as never)).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
  });

  it("never overwrites a file whose header is garbage (BAD_HEADER) and tolerates a BOM", async () => {
    const dir = tempDir();
    const bad = join(dir, "bad.jsonl");
    const garbage = 'this is not json\n{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t"}\n';
    writeFileSync(bad, garbage);
    await expect(SessionManager.open(bad, { root: dir })).rejects.toMatchObject({ code: "BAD_HEADER", path: bad });
    expect(readFileSync(bad, "utf8")).toBe(garbage);
    expect(existsSync(`${bad}.lock`)).toBe(false); // the lock was released

    const bom = join(dir, "bom.jsonl");
    const body =
      '{"type":"session","version":3,"id":"s-bom","timestamp":"t","cwd":"/x"}\n{"type":"message","id":"aaaaaaaa","parentId":null,"t' +
      'imestamp":"t","message":{"role":"user","content":"x"}}\n';
    writeFileSync(bom, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body)]));
    const m = await SessionManager.open(bom, { root: dir });
    expect(m.sessionId).toBe("s-bom");
    m.appendMessage({ role: "assistant", content: "y" });
    await m.close();
    const reopened = await SessionManager.open(bom, { root: dir, readOnly: true });
    expect(reopened.getEntries()).toHaveLength(2);
  });

  it("opens an absent or empty file as a new session", async () => {
    const dir = tempDir();
    const path = join(dir, "2025-01-01T00-00-00-000Z_0190a000-0000-7000-8000-000000000000.jsonl");
    writeFileSync(path, "");
    const m = await SessionManager.open(path, { root: dir, cwd: "/work/x" });
    expect(m.sessionId).toBe("0190a000-0000-7000-8000-000000000000");
    m.appendMessage({ role: "user", content: "x" });
    await m.close();
    expect(lines(path).map((l) => l.type)).toEqual(["session", "message"]);
    expect(lines(path)[0]!.cwd).toBe("/work/x");
  });

  it("a read-only open or forkFrom of a missing file is SESSION_NOT_FOUND, and creates nothing", async () => {
    const dir = tempDir();
    const missing = join(dir, "nope.jsonl");
    await expect(SessionManager.open(missing, { root: dir, readOnly: true })).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await expect(SessionManager.forkFrom(missing, dir, { root: dir })).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    expect(readdirSync(dir)).toEqual([]);
  });

  it("keeps unknown entry types and fields through load and migration rewrite", async () => {
    const dir = tempDir();
    const path = join(dir, "v2.jsonl");
    const records = [
      { type: "session", version: 2, id: "s-unknown", timestamp: "t", cwd: "/x", vendorField: { a: 1 } },
      { type: "session_init", id: "aaaaaaaa", parentId: null, timestamp: "t", systemPrompt: "p" },
      {
        type: "message",
        id: "bbbbbbbb",
        parentId: "aaaaaaaa",
        timestamp: "t",
        message: { role: "user", content: "x", futureKnob: true },
        extra: [1],
      },
    ];
    writeFileSync(path, `${records.map((r) => JSON.stringify(r)).join("\n")}\n`);
    const warnings: StoreWarning[] = [];
    const m = await SessionManager.open(path, { root: dir, onWarning: (w) => warnings.push(w) });
    await m.close();
    const disk = lines(path);
    expect(disk[0]).toEqual({ ...records[0], version: 3 });
    expect(disk.slice(1)).toEqual(records.slice(1));
    expect(warnings).toEqual([]);
    expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });
});
