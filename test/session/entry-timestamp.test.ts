import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

function fileTimestamps(path: string): string[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .slice(1)
    .map((line) => (JSON.parse(line) as { timestamp: string }).timestamp);
}

/** An entry's timestamp is its clock's time as toISOString writes it: the system clock's unless `now` is given. */
describe("entry timestamps", () => {
  it("take the system clock by default: ISO text of a time within the append, on disk and in memory", async () => {
    const m = await SessionManager.create("/w/t", { root: tempDir("ts-stamp-") });
    const before = Date.now();
    m.appendMessage({ role: "user", content: "one" });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "two" }] });
    m.appendEntry({ type: "custom", customType: "x" });
    const after = Date.now();
    const stamps = m.getEntries().map((e) => e.timestamp);
    for (const stamp of stamps) {
      expect(new Date(stamp).toISOString()).toBe(stamp);
      expect(Date.parse(stamp)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(stamp)).toBeLessThanOrEqual(after);
    }
    await m.close();
    expect(fileTimestamps(m.sessionFile!)).toEqual(stamps);
  });

  it("take a given clock's time, every call of it, whatever the system time", async () => {
    const times = [Date.UTC(2001, 0, 1, 0, 0, 0, 7), Date.UTC(2001, 0, 1, 0, 0, 0, 7), Date.UTC(1999, 11, 31, 23, 59, 59, 999)];
    let calls = 0;
    const now = () => new Date(times[Math.min(calls++, times.length - 1)]!);
    const m = await SessionManager.create("/w/t", { root: tempDir("ts-stamp-"), now });
    const start = calls; // create() reads the clock for the header
    m.appendMessage({ role: "user", content: "one" });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "two" }] });
    m.appendEntry({ type: "custom", customType: "x" });
    expect(calls - start).toBe(3);
    const expected = [0, 1, 2].map((k) => new Date(times[Math.min(start + k, times.length - 1)]!).toISOString());
    expect(m.getEntries().map((e) => e.timestamp)).toEqual(expected);
    await m.close();
    expect(fileTimestamps(m.sessionFile!)).toEqual(m.getEntries().map((e) => e.timestamp));
  });
});
