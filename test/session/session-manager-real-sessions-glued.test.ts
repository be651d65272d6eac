import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sharedData } from "../support/shared-data.ts";

const REAL = sharedData("real-sessions") ?? "";
const present = REAL !== "";
const files = present
  ? readdirSync(REAL)
      .filter((n) => n.endsWith(".jsonl"))
      .sort()
  : [];

/** An independent oracle: every object of the file, a glued line cut where `}{"type":` joins two. */
function objectsOf(path: string): { objects: Array<Record<string, unknown>>; gluedLines: number } {
  const objects: Array<Record<string, unknown>> = [];
  let gluedLines = 0;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.trim().length === 0) continue;
    try {
      objects.push(JSON.parse(line));
    } catch {
      const parts = line.split(/(?<=\})(?=\{"type":)/);
      objects.push(...parts.map((p) => JSON.parse(p)));
      gluedLines++;
    }
  }
  return { objects, gluedLines };
}

describe.skipIf(!present)("real pi sessions, glued records included", () => {
  it.each(files)("%s loads every record it holds, none quarantined, every compaction kept", async (name) => {
    const path = join(REAL, name);
    const { objects, gluedLines } = objectsOf(path);
    const m = await SessionManager.open(path, { root: tempDir(), readOnly: true });
    expect(m.getEntries().map((e) => e.type)).toEqual(objects.slice(1).map((o) => o.type));
    expect(m.loadReport.malformed).toEqual([]);
    expect(m.loadReport.repaired).toHaveLength(gluedLines);
    const compactions = objects.filter((o) => o.type === "compaction").length;
    expect(m.getEntries().filter((e) => e.type === "compaction")).toHaveLength(compactions);
  });
});

describe.skipIf(!present)("real pi sessions with a compaction glued to the line before it", () => {
  it.each(files)("%s: the glued copy loads exactly like the original", async (name) => {
    const lines = readFileSync(join(REAL, name), "utf8").split("\n");
    const at = lines.findIndex((l, i) => i > 1 && l.startsWith('{"type":"compaction"'));
    const dir = tempDir();
    const path = join(dir, name);
    const glued = at === -1 ? lines : [...lines.slice(0, at - 1), lines[at - 1]! + lines[at]!, ...lines.slice(at + 1)];
    writeFileSync(path, glued.join("\n"));
    const original = await SessionManager.open(join(REAL, name), { root: dir, readOnly: true });
    const m = await SessionManager.open(path, { root: dir, readOnly: true });
    expect(m.getEntries()).toEqual(original.getEntries());
    expect(m.buildContext()).toEqual(original.buildContext());
    expect(m.loadReport.malformed).toEqual([]);
    expect(m.loadReport.repaired).toHaveLength(at === -1 ? 0 : 1);
  });
});
