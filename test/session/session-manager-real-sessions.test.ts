import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_TRANSIENT_KEYS, stripTransientFields } from "../../src/prepare/strip-transient-fields.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sharedData } from "../support/shared-data.ts";

const REAL = sharedData("real-sessions");
const files = ["pi-v1-before-compaction.jsonl", "pi-v1-large-session.jsonl"];

function rawLines(path: string): Array<Record<string, unknown>> {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l));
}

describe.runIf(REAL !== null)("real pi v1 transcripts", () => {
  it.each(files)("%s migrates to v3, takes an append and reopens with everything", async (name) => {
    const dir = tempDir();
    const path = join(dir, name);
    copyFileSync(join(REAL!, name), path);
    const raw = rawLines(join(REAL!, name));
    const root = join(dir, "store");

    const readOnlyA = await SessionManager.open(path, { root, readOnly: true });
    const readOnlyB = await SessionManager.open(path, { root, readOnly: true });
    expect(readOnlyA.getEntries().map((e) => e.id)).toEqual(readOnlyB.getEntries().map((e) => e.id));
    expect(readFileSync(path).equals(readFileSync(join(REAL!, name)))).toBe(true); // read-only never writes

    const manager = await SessionManager.open(path, { root });
    expect(manager.loadReport.migratedFrom).toBe(1);
    expect(manager.loadReport.malformed).toEqual([]);
    expect(manager.header.version).toBe(3);
    expect(manager.sessionId).toBe(raw[0]!.id);
    const entries = manager.getEntries();
    expect(entries.map((e) => e.id)).toEqual(readOnlyA.getEntries().map((e) => e.id));
    expect(entries).toHaveLength(raw.length - 1);
    entries.forEach((entry, i) => {
      expect(entry.parentId).toBe(i === 0 ? null : entries[i - 1]!.id);
      const { id: _id, parentId: _p, firstKeptEntryId: _k, ...rest } = entry;
      const { firstKeptEntryIndex: _i, ...original } = raw[i + 1]!;
      expect(rest).toEqual(original);
    });
    for (const [i, record] of raw.entries()) {
      if (record.type !== "compaction") continue;
      const compaction = entries[i - 1]!;
      // index counts the header as 0, so raw line k is entries[k - 1]
      expect(compaction.firstKeptEntryId).toBe(entries[(record.firstKeptEntryIndex as number) - 1]!.id);
    }

    const newId = manager.appendMessage({ role: "user", content: [{ type: "text", text: "after migration" }], timestamp: 1 });
    await manager.close();

    const reopened = await SessionManager.open(path, { root });
    expect(reopened.loadReport.malformed).toEqual([]);
    expect(reopened.loadReport.migratedFrom).toBeNull();
    // What reaches disk is what the pipeline keeps: transient streaming fields are stripped.
    const transient = new Set(DEFAULT_TRANSIENT_KEYS);
    expect(reopened.getEntries().slice(0, -1)).toEqual(entries.map((e) => stripTransientFields(e, transient)));
    expect(reopened.getEntries().at(-1)).toMatchObject({ id: newId, parentId: entries.at(-1)!.id, message: { role: "user" } });
    expect(reopened.getLeafId()).toBe(newId);

    const compactions = reopened.getEntries().filter((e) => e.type === "compaction");
    const context = reopened.buildContext();
    if (compactions.length > 0) {
      const last = compactions.at(-1)!;
      expect(context.messages[0]).toMatchObject({ role: "compactionSummary", summary: last.summary });
      const kept = reopened.getEntry(last.firstKeptEntryId as string)!;
      expect(context.messages[1]).toBe(kept.message);
      expect(context.messages.length).toBeLessThan(reopened.getEntries().length);
    } else {
      expect(context.messages[0]).toBe(reopened.getEntries()[0]!.message);
    }
    expect(context.messages.at(-1)).toMatchObject({ content: [{ type: "text", text: "after migration" }] });
    await reopened.close();
  });
});
