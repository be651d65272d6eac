import type { SessionEntry, SessionHeader } from "../format/types.ts";
import { followModel, type ModelState, usageRowOf } from "./usage-rows.ts";

/**
 * A session's models and cost from its own entries, by the rows `usage` counts (`usageRowOf`): the
 * page needs no scan of the whole store. Cost is null when no call of it is priced.
 */
export function usageOfEntries(header: SessionHeader, entries: Iterable<SessionEntry>): { models: string[]; cost: number | null } {
  const model: ModelState = { provider: null, model: null };
  followModel(model, header as unknown as Record<string, unknown>);
  const models = new Set<string>();
  let cost = 0;
  let priced = false;
  let line = 2;
  for (const entry of entries) {
    const record = entry as unknown as Record<string, unknown>;
    followModel(model, record);
    const { row } = usageRowOf(record, { sessionId: header.id, cwd: String(header.cwd), line: line++, model });
    if (row === null) continue;
    if (row.model !== null) models.add(row.model);
    if (row.cost.total > 0) priced = true;
    cost += row.cost.total;
  }
  return { models: [...models].sort(), cost: priced ? cost : null };
}
