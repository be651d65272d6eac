import { beforeAll, expect, it } from "vitest";
import * as facade from "../../src/pi/index.ts";
import { assistant, linesOf, piHome, user } from "./helpers.ts";
import { describePi15, loadPi } from "./pi15.ts";

type Pi = Awaited<ReturnType<typeof loadPi>>;
let real: Pi;
let piDefaultSessionDir: (cwd: string, agentDir?: string) => string;

interface AnyManager {
  getEntries(): any[];
  getLeafId(): string | null;
  getHeader(): any;
  getSessionName(): string | undefined;
  buildSessionContext(): any;
  buildSessionProjection(): any;
  buildContextEntries(): any[];
  getEntryCount(): number;
  getTree(): any[];
}

/** What both implementations must agree on for one session. */
function view(sm: AnyManager) {
  const projection = sm.buildSessionProjection();
  return {
    entries: sm.getEntries(),
    leaf: sm.getLeafId(),
    header: sm.getHeader(),
    name: sm.getSessionName(),
    context: sm.buildSessionContext(),
    projection: { ...projection, entries: projection.entries.map((p: any) => [p.sourceEntry.id, p.messages]) },
    contextEntries: sm.buildContextEntries().map((e) => e.id),
    count: sm.getEntryCount(),
    roots: sm.getTree().map((n) => [n.entry.id, n.label, n.children.length]),
  };
}

const usage = {
  input: 3,
  output: 4,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 7,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const tool = (name: string) => ({ name, description: `${name} tool`, parameters: { type: "object", properties: {} } });

/** A session with every entry kind of pi 1.5.2, a branch, a label, context edits and compactions. */
function fill(sm: any): void {
  sm.appendMessage({
    role: "system",
    content: "base prompt",
    sections: { env: "<env>1</env>" },
    toolsAdded: [tool("read"), tool("bash")],
    timestamp: 0,
  });
  sm.appendModelChange("anthropic", "claude");
  sm.appendThinkingLevelChange("medium");
  const u1 = sm.appendMessage(user("first question"));
  const a1 = sm.appendMessage(assistant("first answer"));
  sm.appendLabelChange(u1, "start");
  sm.appendUsage("cache_warm", "anthropic", "claude", usage, "warm");
  const u2 = sm.appendMessage(user("second"));
  sm.appendMessage(assistant("second answer"));
  sm.branch(u2);
  sm.appendMessage(assistant("alternative"));
  sm.branchWithSummary(a1, "abandoned path", { files: [] }, false, usage);
  sm.appendContextEdit(u1, { content: "first question, edited" });
  sm.appendContextEdit(a1, { content: "shorter" });
  sm.appendMessage({ role: "system", content: "", sections: { env: "<env>2</env>" }, toolsRemoved: [{ name: "bash" }], timestamp: 5 });
  sm.appendCompaction("summary so far", u1, 4242, { k: 1 }, false, usage);
  sm.appendCustomEntry("ext", { n: 1 });
  sm.appendCustomMessageEntry("ext", "visible", true);
  sm.appendSessionInfo("interop");
  const u3 = sm.appendMessage(user("after compaction"));
  sm.appendContextEdit(u3, null);
  sm.appendCompaction("retain none", null, 10);
  sm.appendMessage(assistant("last"));
}

describePi15("pi-interop.test.ts")("interop with the real pi 1.5.2 SessionManager", () => {
  beforeAll(async () => {
    real = await loadPi();
    // pi's package exports only its main entry; its session module is read by path for this one function.
    const path = "../../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js";
    piDefaultSessionDir = (await import(/* @vite-ignore */ path)).getDefaultSessionDir;
  });

  it("has every public method and static of pi's SessionManager, with the same declared parameters", () => {
    const privateInPi = new Set([
      "constructor",
      "_setSessionFile",
      "_loadEntries",
      "_buildIndex",
      "_rewriteFile",
      "_hasConversation",
      "_appendEntry",
    ]);
    const methods = Object.getOwnPropertyNames(real.SessionManager.prototype).filter((n) => !privateInPi.has(n));
    expect(methods.length).toBeGreaterThan(35);
    for (const name of methods) {
      const ours = (facade.SessionManager.prototype as any)[name];
      expect(typeof ours, name).toBe("function");
      expect(ours.length, name).toBe((real.SessionManager.prototype as any)[name].length);
    }
    const statics = Object.getOwnPropertyNames(real.SessionManager).filter((n) => typeof (real.SessionManager as any)[n] === "function");
    expect(statics.sort()).toEqual(["continueRecent", "create", "findById", "forkFrom", "inMemory", "list", "listAll", "open"]);
    for (const name of statics) {
      // Ours may take one more (optional) argument, the engine settings.
      const theirs = (real.SessionManager as any)[name].length;
      expect([theirs, theirs + 1], name).toContain((facade.SessionManager as any)[name].length);
    }
    for (const fn of [
      "buildContextEntries",
      "buildSessionContext",
      "buildSessionProjection",
      "getLatestCompactionEntry",
      "migrateSessionEntries",
      "parseSessionEntries",
      "sessionEntryToContextMessages",
    ])
      expect(typeof (facade as any)[fn], fn).toBe("function");
  });

  it("names a cwd's session directory as pi does", () => {
    const h = piHome();
    for (const cwd of [h.cwd, "/a/b:c/d e", "/"]) {
      expect(facade.getDefaultSessionDir(cwd, h.agentDir)).toBe(piDefaultSessionDir(cwd, h.agentDir));
    }
  });

  it("the same calls on both give the same tree, context and projection (in memory)", () => {
    const ours = facade.SessionManager.inMemory("/x");
    const theirs = real.SessionManager.inMemory("/x");
    fill(ours);
    fill(theirs);
    // Ids and times differ between two runs; everything else must not.
    const masked = (k: string, val: unknown) =>
      k === "timestamp" || k === "id" ? typeof val : typeof val === "string" && /^[0-9a-f]{8}$/.test(val) ? "<entry id>" : val;
    const shape = (v: ReturnType<typeof view>) => JSON.parse(JSON.stringify(v, masked));
    expect(shape(view(ours))).toEqual(shape(view(theirs)));
  });

  it("pi opens a session written by the facade: same ids, parents, leaf, labels, name, context, projection", () => {
    const h = piHome();
    const dir = facade.getDefaultSessionDir(h.cwd, h.agentDir);
    const ours = facade.SessionManager.create(h.cwd, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    fill(ours);
    const theirs = real.SessionManager.open(ours.getSessionFile()!, dir);
    expect(theirs.getSessionId()).toBe(ours.getSessionId());
    expect(view(theirs)).toEqual(view(ours));
  });

  it("the facade opens a session written by pi, and pi reads what the facade appended to it", () => {
    const h = piHome();
    const dir = facade.getDefaultSessionDir(h.cwd, h.agentDir);
    const theirs = real.SessionManager.create(h.cwd, dir);
    fill(theirs);
    const file = theirs.getSessionFile()!;
    const ours = facade.SessionManager.open(file, undefined, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    expect(view(ours)).toEqual(view(theirs as never));
    const added = ours.appendMessage(user("from the facade"));
    const again = real.SessionManager.open(file, dir);
    expect(again.getLeafId()).toBe(added);
    expect(again.getEntry(added)!.parentId).toBe(theirs.getLeafId());
    expect(view(again as never)).toEqual(view(ours));
    ours.close();
  });

  it("list, continueRecent, findById and createBranchedSession agree with pi on the same tree", async () => {
    const h = piHome();
    const dir = facade.getDefaultSessionDir(h.cwd, h.agentDir);
    const a = real.SessionManager.create(h.cwd, dir);
    a.appendMessage({ ...user("pi session"), timestamp: 1000 } as never);
    a.appendMessage({ ...assistant("x"), timestamp: 2000 } as never);
    const b = facade.SessionManager.create(h.cwd, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir, id: "facade-b" });
    b.appendMessage({ ...user("facade session"), timestamp: 3000 });
    const keep = b.appendMessage({ ...assistant("y"), timestamp: 4000 });
    b.appendLabelChange(keep, "kept");
    b.appendSessionInfo("named");
    b.close();
    const ourList = await facade.SessionManager.list(h.cwd, undefined, undefined, { agentDir: h.agentDir });
    const theirList = await real.SessionManager.list(h.cwd, dir);
    expect(ourList).toEqual(theirList);
    expect(ourList.map((i) => i.id)).toEqual([b.getSessionId(), a.getSessionId()]);
    expect(facade.SessionManager.findById(h.cwd, "facade-b", dir)).toBe(real.SessionManager.findById(h.cwd, "facade-b", dir));

    const resumed = facade.SessionManager.continueRecent(h.cwd, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    expect(resumed.getSessionFile()).toBe(real.SessionManager.continueRecent(h.cwd, dir).getSessionFile());
    const piResumed = real.SessionManager.open(resumed.getSessionFile()!, dir);
    const theirBranch = piResumed.createBranchedSession(keep)!;
    const branched = resumed.createBranchedSession(keep)!;
    resumed.close();
    const piView = real.SessionManager.open(branched, dir);
    expect(piView.getEntries().map((e) => e.id)).toEqual(resumed.getEntries().map((e) => e.id));
    expect(piView.getHeader()!.parentSession).toBe(b.getSessionFile());
    const strip = (l: any) => ({
      ...l,
      id: l.type === "label" ? "label" : l.id,
      parentId: "p",
      timestamp: l.type === "session" ? "t" : l.timestamp,
    });
    expect(linesOf(branched).slice(1).map(strip)).toEqual(linesOf(theirBranch).slice(1).map(strip));
  });
});
