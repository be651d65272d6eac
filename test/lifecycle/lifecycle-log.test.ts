import { appendFileSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { appendLifecycleRecord, foldFlags, lifecycleLogPath, readLifecycleLog } from "../../src/lifecycle/lifecycle-log.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("the lifecycle log", () => {
  it("a torn last line (a crashed append) is closed before the next record, reported and kept, never rewritten", () => {
    const root = tempDir();
    appendLifecycleRecord(root, { op: "pin", id: "a", at: "2026-01-01T00:00:00.000Z" });
    appendFileSync(lifecycleLogPath(root), '{"op":"archive","id":"b","at":"2026-01-0');
    appendLifecycleRecord(root, { op: "archive", id: "c", at: "2026-01-02T00:00:00.000Z" });
    const text = readFileSync(lifecycleLogPath(root), "utf8");
    expect(text.split("\n")).toEqual([
      '{"op":"pin","id":"a","at":"2026-01-01T00:00:00.000Z"}',
      '{"op":"archive","id":"b","at":"2026-01-0',
      '{"op":"archive","id":"c","at":"2026-01-02T00:00:00.000Z"}',
      "",
    ]);
    const warnings: StoreWarning[] = [];
    const records = readLifecycleLog(root, (w) => warnings.push(w));
    expect(records.map((r) => r.id)).toEqual(["a", "c"]);
    expect(warnings.map((w) => [w.code, w.message])).toEqual([["MALFORMED_LINES", "Lifecycle log lines skipped (not records): 2"]]);
    expect(readFileSync(lifecycleLogPath(root), "utf8")).toBe(text);
  });

  it("folds to the last word per session; a purge forgets the session", () => {
    const at = "2026-01-01T00:00:00.000Z";
    const flags = foldFlags([
      { op: "pin", id: "a", at },
      { op: "archive", id: "a", at },
      { op: "unpin", id: "a", at },
      { op: "pin", id: "b", at },
      { op: "purge", id: "b", at },
      { op: "archive", id: "c", at },
      { op: "unarchive", id: "c", at },
    ]);
    expect([...flags]).toEqual([["a", { pinned: false, archived: true }]]);
  });
});
