import type { PrunePolicy } from "./retention-config.ts";

/** A session as prune weighs it. */
export interface PruneCandidate {
  id: string;
  /** File path, or the id in a database. */
  path: string;
  cwd: string;
  modified: Date;
  /** Bytes it takes (session file or rows, artifacts, quarantine). */
  bytes: number;
  pinned: boolean;
  /** A writer holds its lock or lease right now. */
  live: boolean;
}

export type PruneReason = "older-than" | "max-total";
/** Why a chosen session stays: pinned, a writer holds it, or it changed (resumed) since the plan. */
export type SkipReason = "pinned" | "live-writer" | "changed";

export interface PrunePlan {
  /** What goes, oldest first, each with the rule that chose it. */
  remove: Array<{ session: PruneCandidate; reason: PruneReason }>;
  /** What a rule chose but must stay. */
  skipped: Array<{ session: PruneCandidate; reason: SkipReason; rule: PruneReason }>;
  bytes: number;
  /** Bytes of every candidate before, and of what stays after. */
  totalBefore: number;
  totalAfter: number;
}

/**
 * Which sessions a policy removes (pure). The newest `keepLast` of each cwd are kept; of the rest,
 * those last active before `now - olderThanMs` go; then, while the total is over `maxTotalBytes`,
 * the oldest left go. A pinned session or one with a live writer never goes (reported as skipped)
 * and still counts toward the total.
 */
export function planPrune(candidates: readonly PruneCandidate[], policy: PrunePolicy, now: Date): PrunePlan {
  const byAge = [...candidates].sort((a, b) => a.modified.getTime() - b.modified.getTime() || a.id.localeCompare(b.id));
  const kept = new Set<PruneCandidate>();
  if (policy.keepLast !== undefined) {
    const perCwd = new Map<string, number>();
    for (const c of [...byAge].reverse()) {
      const n = perCwd.get(c.cwd) ?? 0;
      if (n < policy.keepLast) kept.add(c);
      perCwd.set(c.cwd, n + 1);
    }
  }
  const plan: PrunePlan = { remove: [], skipped: [], bytes: 0, totalBefore: 0, totalAfter: 0 };
  for (const c of byAge) plan.totalBefore += c.bytes;
  let total = plan.totalBefore;
  const chosen = new Set<PruneCandidate>();
  const choose = (c: PruneCandidate, rule: PruneReason): void => {
    if (c.pinned || c.live) {
      if (!plan.skipped.some((s) => s.session === c)) plan.skipped.push({ session: c, reason: c.pinned ? "pinned" : "live-writer", rule });
      return;
    }
    chosen.add(c);
    plan.remove.push({ session: c, reason: rule });
    plan.bytes += c.bytes;
    total -= c.bytes;
  };
  if (policy.olderThanMs !== undefined) {
    const cutoff = now.getTime() - policy.olderThanMs;
    for (const c of byAge) if (!kept.has(c) && c.modified.getTime() < cutoff) choose(c, "older-than");
  }
  if (policy.maxTotalBytes !== undefined) {
    for (const c of byAge) {
      if (total <= policy.maxTotalBytes) break;
      if (!kept.has(c) && !chosen.has(c)) choose(c, "max-total");
    }
  }
  plan.remove.sort((a, b) => a.session.modified.getTime() - b.session.modified.getTime());
  plan.totalAfter = total;
  return plan;
}
