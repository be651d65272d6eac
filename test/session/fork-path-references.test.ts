import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

function lines(path: string): Array<Record<string, any>> {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

// A fork at an entry is one path taken out of the tree: labels are not branch-relative (a label on
// the path may name an entry off it, a path entry may be labelled off the path), context edits are.
describe("fork({ atEntryId }) keeps the path's references inside the new file", () => {
  it("labels re-created for the path's entries, the path re-chained, compaction and context-edit targets valid", async () => {
    const root = tempDir();
    const m = await SessionManager.create(tempDir(), { root });
    const u1 = m.appendMessage({ role: "user", content: "one" });
    const off = m.appendMessage({ role: "assistant", content: "off the path" });
    m.branch(u1);
    const a1 = m.appendMessage({ role: "assistant", content: "two" });
    const l1 = m.appendLabelChange(off, "elsewhere"); // on the path, naming an entry off it
    const l2 = m.appendLabelChange(u1, "start");
    const e = m.appendEntry({ type: "context_edit", targetId: u1, replacement: { content: "edited" } });
    const c = m.appendCompaction("sum", l2, 5);
    const u2 = m.appendMessage({ role: "user", content: "three" });
    m.branch(off);
    m.appendLabelChange(a1, "answer"); // off the path, naming a path entry
    const before = m.buildContext();
    m.branch(u2);
    const atLeaf = m.buildContext();
    const fork = await m.fork({ atEntryId: u2 });
    const written = lines(fork.sessionFile!).slice(1);
    const ids = new Set(written.map((l) => l.id));
    for (const l of written) {
      if (l.parentId !== null) expect(ids.has(l.parentId), `${l.type} ${l.id} parent`).toBe(true);
      if (l.type === "label" || l.type === "context_edit") expect(ids.has(l.targetId), `${l.type} ${l.id} target`).toBe(true);
      if (l.type === "compaction") expect(ids.has(l.firstKeptEntryId), "firstKeptEntryId").toBe(true);
    }
    expect(written.filter((l) => l.type !== "label").map((l) => [l.id, l.parentId])).toEqual([
      [u1, null],
      [a1, u1],
      [e, a1],
      [c, e],
      [u2, c],
    ]);
    expect(written.find((l) => l.id === c)!.firstKeptEntryId).toBe(e);
    expect(written.filter((l) => l.type === "label").map((l) => [l.targetId, l.label])).toEqual([
      [u1, "start"],
      [a1, "answer"],
    ]);
    expect(ids.has(l1) || ids.has(l2)).toBe(false);
    // The re-created labels follow the chosen entry (as in pi): the leaf's path runs through it and
    // what the model sees there is unchanged.
    expect(fork.getBranch().map((x) => x.id)).toContain(u2);
    expect(fork.buildContext().messages).toEqual(atLeaf.messages);
    void before;
    await fork.close();
    await m.close();
  });
});
