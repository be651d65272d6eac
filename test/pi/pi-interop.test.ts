import { describe, expect, it } from "vitest";
import * as real from "@mariozechner/pi-coding-agent";
// pi's package exports only its main entry; its session module is read by path for this one function.
import { getDefaultSessionDir as piDefaultSessionDir } from "../../node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js";
import * as facade from "../../src/pi/index.ts";
import { assistant, linesOf, piHome, user } from "./helpers.ts";

/** What both implementations must agree on for one session. */
function view(sm: {
  getEntries(): any[];
  getLeafId(): string | null;
  getHeader(): any;
  getSessionName(): string | undefined;
  buildSessionContext(): any;
  getTree(): any[];
}) {
  return {
    entries: sm.getEntries(),
    leaf: sm.getLeafId(),
    header: sm.getHeader(),
    name: sm.getSessionName(),
    context: sm.buildSessionContext(),
    roots: sm.getTree().map((n) => [n.entry.id, n.label, n.children.length]),
  };
}

/** A session with every entry kind, a branch, a label and a compaction. */
function fill(sm: facade.SessionManager | real.SessionManager): void {
  sm.appendModelChange("anthropic", "claude");
  sm.appendThinkingLevelChange("medium");
  const u1 = sm.appendMessage(user("first question") as never);
  sm.appendMessage(assistant("first answer") as never);
  sm.appendLabelChange(u1, "start");
  const u2 = sm.appendMessage(user("second") as never);
  sm.appendMessage(assistant("second answer") as never);
  sm.branch(u2);
  sm.appendMessage(assistant("alternative") as never);
  sm.branchWithSummary(u1, "abandoned path");
  sm.appendCompaction("summary so far", u1, 4242);
  sm.appendCustomEntry("ext", { n: 1 });
  sm.appendCustomMessageEntry("ext", "visible", true);
  sm.appendSessionInfo("interop");
  sm.appendMessage(assistant("last") as never);
}

describe("interop with the real pi 0.73.1 SessionManager", () => {
  it("has every public method and factory of pi's SessionManager, with the same declared parameters", () => {
    const privateInPi = new Set(["constructor", "_buildIndex", "_rewriteFile", "_appendEntry"]);
    const methods = Object.getOwnPropertyNames(real.SessionManager.prototype).filter((n) => !privateInPi.has(n));
    expect(methods.length).toBeGreaterThan(30);
    for (const name of methods) {
      const ours = (facade.SessionManager.prototype as any)[name];
      expect(typeof ours, name).toBe("function");
      expect(ours.length, name).toBe((real.SessionManager.prototype as any)[name].length);
    }
    for (const name of ["create", "open", "continueRecent", "inMemory", "forkFrom", "list", "listAll"]) {
      // Ours may take one more (optional) argument, the engine settings.
      const theirs = (real.SessionManager as any)[name].length;
      expect([theirs, theirs + 1], name).toContain((facade.SessionManager as any)[name].length);
    }
  });

  it("names a cwd's session directory as pi does", () => {
    const h = piHome();
    for (const cwd of [h.cwd, "/a/b:c/d e", "/"]) {
      expect(facade.getDefaultSessionDir(cwd, h.agentDir)).toBe(piDefaultSessionDir(cwd, h.agentDir));
    }
  });

  it("pi opens a session written by the facade: same ids, parents, leaf, labels, name, context", () => {
    const h = piHome();
    const dir = facade.getDefaultSessionDir(h.cwd, h.agentDir);
    const ours = facade.SessionManager.create(h.cwd, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    fill(ours);
    ours.close();
    const theirs = real.SessionManager.open(ours.getSessionFile()!, dir);
    expect(theirs.getSessionId()).toBe(ours.getSessionId());
    expect(view(theirs)).toEqual(view(ours));
    expect(theirs.getLabel(ours.getEntries()[2]!.id)).toBe("start");
  });

  it("the facade opens a session written by pi, and pi reads what the facade appended to it", () => {
    const h = piHome();
    const dir = facade.getDefaultSessionDir(h.cwd, h.agentDir);
    const theirs = real.SessionManager.create(h.cwd, dir);
    fill(theirs);
    const file = theirs.getSessionFile()!;
    const ours = facade.SessionManager.open(file, undefined, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    expect(view(ours)).toEqual(view(theirs));
    const added = ours.appendMessage(user("from the facade") as never);
    ours.close();
    const again = real.SessionManager.open(file, dir);
    expect(again.getLeafId()).toBe(added);
    expect(again.getEntry(added)!.parentId).toBe(theirs.getLeafId());
    expect(view(again)).toEqual(
      view(facade.SessionManager.open(file, undefined, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir })),
    );
  });

  it("list, continueRecent and createBranchedSession agree with pi on the same tree", async () => {
    const h = piHome();
    const dir = facade.getDefaultSessionDir(h.cwd, h.agentDir);
    const a = real.SessionManager.create(h.cwd, dir);
    a.appendMessage({ ...user("pi session"), timestamp: 1000 } as never);
    a.appendMessage({ ...assistant("x"), timestamp: 2000 } as never);
    const b = facade.SessionManager.create(h.cwd, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    b.appendMessage({ ...user("facade session"), timestamp: 3000 } as never);
    const keep = b.appendMessage({ ...assistant("y"), timestamp: 4000 } as never);
    b.appendSessionInfo("named");
    b.close();
    const ourList = await facade.SessionManager.list(h.cwd, undefined, undefined, { agentDir: h.agentDir });
    const theirList = await real.SessionManager.list(h.cwd, dir);
    expect(ourList).toEqual(theirList);
    expect(ourList.map((i) => i.id)).toEqual([b.getSessionId(), a.getSessionId()]);

    const resumed = facade.SessionManager.continueRecent(h.cwd, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    expect(resumed.getSessionFile()).toBe(real.SessionManager.continueRecent(h.cwd, dir).getSessionFile());
    const branched = resumed.createBranchedSession(keep)!;
    resumed.close();
    const piView = real.SessionManager.open(branched, dir);
    expect(piView.getEntries().map((e) => e.id)).toEqual(resumed.getEntries().map((e) => e.id));
    expect(piView.getHeader()!.parentSession).toBe(b.getSessionFile());
    expect(linesOf(branched)).toHaveLength(3);
  });
});
