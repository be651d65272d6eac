import { storeLedger } from "../maintenance/store-accounting.ts";
import { storeSpace } from "../maintenance/store-accounting.ts";
import { storeUsage } from "../maintenance/store-accounting.ts";
import type { UsageGrouping } from "../accounting/usage-report.ts";
import type { SpaceGrouping } from "../accounting/du-report.ts";
import { Lifecycle } from "../lifecycle/lifecycle.ts";
import type { TrashEntry } from "../lifecycle/lifecycle-driver.ts";
import { openSessionIndex, type SearchHit, type SessionIndex } from "../search/session-index.ts";
import type { SessionInfo } from "../session/session-info.ts";
import { SessionManager } from "../session/session-manager.ts";
import type { SessionManagerOptions } from "../session/session-options.ts";
import type { StoreWarning } from "../errors.ts";

/** How long a refreshed index answers the search box without another catch-up (typing reads it as it is). @default 10000 */
export const REFRESH_EVERY_MS = 10_000;

/** A session's models, cost and calls, from the usage ledger `usage` reads. */
export interface SessionCost {
  models: string[];
  /** Total cost in USD; null when none of its calls is priced. */
  cost: number | null;
  calls: number;
}

/** A session as the viewer's list shows it: the listing's facts, and its cost once the ledger is read (null before). */
export interface ViewerSession extends SessionInfo {
  usage: SessionCost | null;
}

/** The listing joined with the ledger's costs (`null`: not read yet). */
export function withCosts(list: readonly SessionInfo[], costs: ReadonlyMap<string, SessionCost> | null): ViewerSession[] {
  const none: SessionCost = { models: [], cost: null, calls: 0 };
  return list
    .map((info) => ({ ...info, usage: costs === null ? null : (costs.get(info.id) ?? none) }))
    .sort((a, b) => b.modified.getTime() - a.modified.getTime());
}

/** The store the viewer reads: the same options the CLI builds (`storeOptions`), plus the root for the index. */
export interface ViewerStoreOptions extends SessionManagerOptions {
  root?: string;
}

/**
 * The viewer's one door into the store: every number it shows comes from the library calls the CLI
 * makes (`listAll`, `storeUsage`, `storeSpace`, the search index, the lifecycle), never a copy.
 */
export class ViewerStore {
  private index: SessionIndex | null = null;
  /** When the index last caught up with the store: a burst of keystrokes refreshes it once. */
  private refreshedAt = 0;
  readonly warnings: StoreWarning[] = [];

  constructor(readonly options: ViewerStoreOptions) {}

  private get quiet(): ViewerStoreOptions {
    return { ...this.options, onWarning: (w) => this.remember(w) };
  }

  private remember(w: StoreWarning): void {
    this.warnings.push(w);
    if (this.warnings.length > 50) this.warnings.shift();
  }

  /** Each live session's models, cost and calls, from the usage ledger (the numbers `usage --by session` prints). */
  async costs(): Promise<Map<string, SessionCost>> {
    const ledger = await storeLedger(this.quiet);
    const bySession = new Map<string, SessionCost & { priced: boolean; sum: number; set: Set<string> }>();
    for (const row of ledger.rows) {
      if (row.deleted) continue;
      let s = bySession.get(row.sessionId);
      if (s === undefined) {
        s = { models: [], cost: null, calls: 0, priced: false, sum: 0, set: new Set() };
        bySession.set(row.sessionId, s);
      }
      if (row.model !== null) s.set.add(row.model);
      s.calls++;
      if (row.cost.total > 0) s.priced = true;
      s.sum += row.cost.total;
    }
    return new Map([...bySession].map(([id, s]) => [id, { models: [...s.set].sort(), cost: s.priced ? s.sum : null, calls: s.calls }]));
  }

  /** Every live session (archived ones too), as the listing has them. */
  listing(): Promise<SessionInfo[]> {
    return SessionManager.listAll({ ...this.quiet, includeArchived: true });
  }

  /** The trash, newest first. */
  async trash(): Promise<TrashEntry[]> {
    const entries = await this.lifecycle().listTrash();
    return entries.sort((a, b) => b.trashedAt.getTime() - a.trashedAt.getTime());
  }

  lifecycle(): Lifecycle {
    return Lifecycle.open(this.quiet);
  }

  /** A session by id or prefix, store-wide (archived included). */
  async resolve(id: string): Promise<SessionInfo> {
    const all = await SessionManager.listAll({ ...this.quiet, includeArchived: true });
    const exact = all.find((s) => s.id === id);
    if (exact !== undefined) return exact;
    return SessionManager.resolve(id, process.cwd(), { ...this.quiet, includeArchived: true } as SessionManagerOptions);
  }

  /** Opens a session read-only (images rehydrated on demand). */
  open(info: SessionInfo): Promise<SessionManager> {
    return SessionManager.open(info.path, { ...this.quiet, readOnly: true, rehydrate: "lazy" });
  }

  /** Hits from the store's search index (the file tree's or the database's own). */
  async search(query: string, limit: number): Promise<SearchHit[]> {
    if (this.index === null) {
      const { store, root, sessionsDir } = this.options;
      this.index = await openSessionIndex(
        store !== undefined && store !== null
          ? { store, onWarning: (w) => this.remember(w) }
          : {
              ...(root !== undefined ? { root } : {}),
              ...(sessionsDir !== undefined ? { sessionsDir } : {}),
              onWarning: (w) => this.remember(w),
            },
      );
    }
    // As-you-type: the first query of a burst brings the index up to date, the rest read it as it is.
    const refresh = Date.now() - this.refreshedAt > REFRESH_EVERY_MS;
    const hits = await this.index.search(query, { limit, refresh });
    if (refresh) this.refreshedAt = Date.now();
    return hits;
  }

  usage(by: UsageGrouping) {
    return storeUsage({ ...this.quiet, by });
  }

  space(by: SpaceGrouping) {
    return storeSpace({ ...this.quiet, by });
  }

  async close(): Promise<void> {
    await this.index?.close();
    this.index = null;
  }
}
