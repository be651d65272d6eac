import type { UsageCost, UsageRow, UsageTokens } from "./usage-rows.ts";

/** A ledger row: a live session's, or one recorded when its session was deleted. */
export interface LedgerRow extends UsageRow {
  /** The session no longer exists; the row comes from the store's ledger of deleted sessions. */
  deleted: boolean;
  /** When the deleted session's rows were recorded (ISO 8601); null for a live row. */
  deletedAt: string | null;
}

/** `usage`'s grouping. */
export type UsageGrouping = "session" | "model" | "day" | "cwd";

/** The usage of one group (a session, a model, a UTC day, a cwd). */
export interface UsageGroup {
  /** Session id, `provider/model`, `YYYY-MM-DD` (UTC), or cwd; `unknown` when the rows do not say. */
  key: string;
  /** Model calls. */
  calls: number;
  /** Of them, calls of deleted sessions. */
  deletedCalls: number;
  sessions: number;
  tokens: UsageTokens;
  /** The cost of the priced calls (recorded by the agent, or from a price table). */
  cost: UsageCost;
  /** Calls with no cost: the agent recorded none and no price table knows the model (never counted as $0). */
  unpricedCalls: number;
}

/** A time window: rows with a timestamp in `[since, until)`. Rows without a timestamp are outside any window. */
export interface UsageWindow {
  since?: Date;
  until?: Date;
}

function zeroTokens(): UsageTokens {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
}
function zeroCost(): UsageCost {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
}

/** The key of a row in a grouping. */
function groupKey(row: LedgerRow, by: UsageGrouping): string {
  switch (by) {
    case "session":
      return row.sessionId || "unknown";
    case "model":
      return row.model === null ? "unknown" : row.provider === null ? row.model : `${row.provider}/${row.model}`;
    case "day":
      return row.timestamp?.slice(0, 10) ?? "unknown";
    case "cwd":
      return row.cwd || "unknown";
  }
}

/** True when the row falls inside the window (always, without one). */
export function inWindow(row: LedgerRow, window: UsageWindow): boolean {
  if (window.since === undefined && window.until === undefined) return true;
  if (row.timestamp === null) return false;
  const t = Date.parse(row.timestamp);
  return (window.since === undefined || t >= window.since.getTime()) && (window.until === undefined || t < window.until.getTime());
}

/**
 * Rows of several sources made one ledger: a row of a live session and the same row recorded for
 * a deleted one (a purge that failed after recording, a restore) count once, as live. Pure.
 */
export function mergeLedger(live: readonly LedgerRow[], deleted: readonly LedgerRow[]): LedgerRow[] {
  const seen = new Set<string>();
  const out: LedgerRow[] = [];
  for (const row of [...live, ...deleted]) {
    const id = `${row.sessionId}\0${row.key}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(row);
  }
  return out;
}

/**
 * The rows with each model call once: a fork copies its source's entries (ids, times, usage and
 * all), so a call found in several sessions, same entry id (or none: a v1 file's line keys differ),
 * time, model and counts, is one call; the first row of it is kept (give the rows oldest session
 * first, live before deleted). Rows without a time are kept as they are. Pure.
 */
export function dropCopies(rows: readonly LedgerRow[]): { rows: LedgerRow[]; copies: number } {
  const seen = new Set<string>();
  const kept: LedgerRow[] = [];
  for (const row of rows) {
    if (row.timestamp !== null) {
      const entry = row.key.startsWith("#") ? null : row.key;
      const call = JSON.stringify([entry, row.timestamp, row.provider, row.model, row.source, row.kind, row.tokens, row.cost]);
      if (seen.has(call)) continue;
      seen.add(call);
    }
    kept.push(row);
  }
  return { rows: kept, copies: rows.length - kept.length };
}

/**
 * Sums the rows inside the window by `by`: days in time order, other groups the largest cost first
 * (then by key); and the grand total. Pure.
 */
export function groupUsage(
  rows: readonly LedgerRow[],
  by: UsageGrouping,
  window: UsageWindow = {},
): { groups: UsageGroup[]; total: UsageGroup } {
  const groups = new Map<string, UsageGroup & { ids: Set<string> }>();
  const total: UsageGroup & { ids: Set<string> } = {
    key: "total",
    calls: 0,
    deletedCalls: 0,
    sessions: 0,
    tokens: zeroTokens(),
    cost: zeroCost(),
    unpricedCalls: 0,
    ids: new Set(),
  };
  for (const row of rows) {
    if (!inWindow(row, window)) continue;
    const key = groupKey(row, by);
    let group = groups.get(key);
    if (group === undefined) {
      group = { key, calls: 0, deletedCalls: 0, sessions: 0, tokens: zeroTokens(), cost: zeroCost(), unpricedCalls: 0, ids: new Set() };
      groups.set(key, group);
    }
    for (const g of [group, total]) {
      g.calls++;
      if (row.deleted) g.deletedCalls++;
      if (row.unpriced === true) g.unpricedCalls++;
      g.ids.add(row.sessionId);
      for (const k of Object.keys(g.tokens) as (keyof UsageTokens)[]) g.tokens[k] += row.tokens[k];
      for (const k of Object.keys(g.cost) as (keyof UsageCost)[]) g.cost[k] += row.cost[k];
    }
  }
  const strip = ({ ids, ...g }: UsageGroup & { ids: Set<string> }): UsageGroup => ({ ...g, sessions: ids.size });
  const list = [...groups.values()].map(strip);
  const byKey = (a: UsageGroup, b: UsageGroup) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  // Days read in time order; the other groupings largest cost first.
  list.sort(by === "day" ? byKey : (a, b) => b.cost.total - a.cost.total || b.tokens.totalTokens - a.tokens.totalTokens || byKey(a, b));
  return { groups: list, total: strip(total) };
}

/**
 * A point in time from `--since`/`--until`: a duration back from `now` (`30d`, `12h`, `2w`, `90m`)
 * or a date (`2025-06-01`, any ISO 8601). Null when the text is neither. Pure (`now` is given).
 */
export function parseTimeBound(text: string, now: Date): Date | null {
  const m = /^(\d+(?:\.\d+)?)(m|h|d|w)$/.exec(text.trim());
  if (m) {
    const unit = { m: 60e3, h: 3600e3, d: 86400e3, w: 7 * 86400e3 }[m[2] as "m"];
    return new Date(now.getTime() - Number(m[1]) * unit);
  }
  if (!/^\d{4}-\d{2}-\d{2}/.test(text.trim())) return null;
  const t = new Date(text.trim());
  return Number.isNaN(t.getTime()) ? null : t;
}
