import type { SessionEntry } from "../format/types.ts";

/** A session's entries in memory: in file order, by id, and the leaf the next append hangs under. */
export interface EntryTree {
  readonly entries: SessionEntry[];
  readonly byId: Map<string, SessionEntry>;
  leafId: string | null;
}

/** The entries of a session, or how to read them when first needed (a fork copied byte for byte). */
export type EntrySource = SessionEntry[] | (() => SessionEntry[]);

function treeOf(entries: SessionEntry[]): EntryTree {
  const byId = new Map<string, SessionEntry>();
  for (const entry of entries) byId.set(entry.id, entry);
  return { entries, byId, leafId: entries.length > 0 ? entries[entries.length - 1]!.id : null };
}

/**
 * A manager's tree, built at once from given entries or, from a loader, the first time it is
 * wanted. A loader that throws leaves the tree unloaded: the next use calls it again.
 */
export class DeferredTree {
  private tree: EntryTree | null = null;
  private load: (() => SessionEntry[]) | null = null;

  constructor(source: EntrySource) {
    if (typeof source === "function") this.load = source;
    else this.tree = treeOf(source);
  }

  /** True once the entries are in memory. */
  get isLoaded(): boolean {
    return this.tree !== null;
  }

  get(): EntryTree {
    if (this.tree === null) {
      this.tree = treeOf(this.load!());
      this.load = null;
    }
    return this.tree;
  }
}
