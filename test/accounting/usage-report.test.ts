import { describe, expect, it } from "vitest";
import { dropCopies, groupUsage, mergeLedger, parseTimeBound, type LedgerRow } from "../../src/accounting/usage-report.ts";

function row(sessionId: string, key: string, timestamp: string | null, total: number, deleted = false): LedgerRow {
  return {
    sessionId,
    cwd: "/w",
    key,
    timestamp,
    provider: "p",
    model: "m",
    source: "message",
    kind: null,
    tokens: { input: 1, output: 2, cacheRead: 3, cacheWrite: 4, totalTokens: 10 },
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total },
    deleted,
    deletedAt: deleted ? "2026-01-01T00:00:00.000Z" : null,
  };
}

describe("usage report", () => {
  const NOW = new Date("2026-11-25T12:00:00.000Z");

  it("parses --since/--until: durations back from now, dates; anything else is null", () => {
    expect(parseTimeBound("30d", NOW)).toEqual(new Date("2026-10-26T12:00:00.000Z"));
    expect(parseTimeBound("2w", NOW)).toEqual(new Date("2026-11-11T12:00:00.000Z"));
    expect(parseTimeBound("12h", NOW)).toEqual(new Date("2026-11-25T00:00:00.000Z"));
    expect(parseTimeBound("90m", NOW)).toEqual(new Date("2026-11-25T10:30:00.000Z"));
    expect(parseTimeBound("2025-06-01", NOW)).toEqual(new Date("2025-06-01T00:00:00.000Z"));
    for (const bad of ["yesterday", "30", "-3d", "2025-13-45", ""]) expect(parseTimeBound(bad, NOW), bad).toBeNull();
  });

  it("a window is [since, until); rows without a time are outside any window but count without one", () => {
    const rows = [row("s", "a", "2025-06-01T00:00:00.000Z", 1), row("s", "b", "2025-06-02T00:00:00.000Z", 2), row("s", "c", null, 4)];
    expect(groupUsage(rows, "session").total.cost.total).toBe(7);
    const window = { since: new Date("2025-06-01T00:00:00.000Z"), until: new Date("2025-06-02T00:00:00.000Z") };
    expect(groupUsage(rows, "session", window).total).toMatchObject({ calls: 1, cost: { total: 1 } });
  });

  it("days in time order, other groupings the largest cost first; deleted calls counted apart", () => {
    const rows = [
      row("s1", "a", "2025-06-03T00:00:00.000Z", 1),
      row("s2", "b", "2025-06-01T00:00:00.000Z", 5, true),
      row("s2", "c", "2025-06-02T23:59:59.000Z", 3, true),
    ];
    expect(groupUsage(rows, "day").groups.map((g) => [g.key, g.calls, g.deletedCalls])).toEqual([
      ["2025-06-01", 1, 1],
      ["2025-06-02", 1, 1],
      ["2025-06-03", 1, 0],
    ]);
    expect(groupUsage(rows, "session").groups.map((g) => [g.key, g.calls, g.deletedCalls, g.cost.total, g.tokens.totalTokens])).toEqual([
      ["s2", 2, 2, 8, 20],
      ["s1", 1, 0, 1, 10],
    ]);
    expect(groupUsage(rows, "model").total).toMatchObject({ calls: 3, sessions: 2, deletedCalls: 2 });
  });

  it("a call copied into another session counts once, the first kept; v1 line keys and rows without a time are not matched", () => {
    const t = "2025-06-01T00:00:00.000Z";
    const rows = [
      row("old", "e1", t, 1),
      row("fork", "e1", t, 1),
      row("fork", "e2", t, 1),
      row("v1a", "#4", t, 2),
      row("v1b", "#9", t, 2),
      row("x", "n1", null, 3),
      row("y", "n1", null, 3),
    ];
    const { rows: kept, copies } = dropCopies(rows);
    expect(kept.map((r) => `${r.sessionId}:${r.key}`)).toEqual(["old:e1", "fork:e2", "v1a:#4", "x:n1", "y:n1"]);
    expect(copies).toBe(2);
  });

  it("a row both live and in the deleted ledger counts once, as live", () => {
    const merged = mergeLedger([row("s", "a", null, 1)], [row("s", "a", null, 1, true), row("s", "b", null, 2, true)]);
    expect(merged.map((r) => [r.key, r.deleted])).toEqual([
      ["a", false],
      ["b", true],
    ]);
  });
});
