import { newShortId } from "./file-entries.ts";
import type { FileEntry, LabelEntry, SessionEntry } from "./types.ts";

function isAssistant(entry: FileEntry): boolean {
  return entry.type === "message" && entry.message?.role === "assistant";
}

/** What a session knows about its entries beyond their order: ids, current labels, an assistant yet. */
export class EntryIndex {
  readonly byId = new Map<string, SessionEntry>();
  readonly labels = new Map<string, string>();
  readonly labelTimes = new Map<string, string>();
  hasAssistant = false;

  /** Indexes `entries` from scratch; returns the last entry's id (the leaf), or null. */
  rebuild(entries: readonly FileEntry[]): string | null {
    this.byId.clear();
    this.labels.clear();
    this.labelTimes.clear();
    this.hasAssistant = false;
    let leaf: string | null = null;
    for (const entry of entries) {
      if (entry.type === "session") continue;
      this.add(entry);
      leaf = entry.id;
    }
    return leaf;
  }

  /** One more entry (a label entry sets or clears its target's label). */
  add(entry: SessionEntry): void {
    this.byId.set(entry.id, entry);
    this.hasAssistant ||= isAssistant(entry);
    if (entry.type === "label") this.label(entry);
  }

  private label(entry: LabelEntry): void {
    if (entry.label) {
      this.labels.set(entry.targetId, entry.label);
      this.labelTimes.set(entry.targetId, entry.timestamp);
    } else {
      this.labels.delete(entry.targetId);
      this.labelTimes.delete(entry.targetId);
    }
  }

  /** root → `id` through parentIds (stops at an unknown parent or a cycle); [] for an unknown id. */
  path(id: string | null | undefined): SessionEntry[] {
    const path: SessionEntry[] = [];
    const seen = new Set<string>();
    for (let at = id ? this.byId.get(id) : undefined; at !== undefined && !seen.has(at.id); ) {
      seen.add(at.id);
      path.push(at);
      at = at.parentId ? this.byId.get(at.parentId) : undefined;
    }
    return path.reverse();
  }

  /**
   * For a branched session holding `kept`: a label entry per labelled entry of it, chained after
   * its last entry, each with the time its label was set (as pi re-creates them).
   */
  labelsFor(kept: readonly SessionEntry[]): LabelEntry[] {
    const ids = new Set(kept.map((e) => e.id));
    const out: LabelEntry[] = [];
    let parentId: string | null = kept[kept.length - 1]?.id ?? null;
    for (const [targetId, label] of this.labels) {
      if (!ids.has(targetId)) continue;
      const id = newShortId(ids);
      ids.add(id);
      out.push({ type: "label", id, parentId, timestamp: this.labelTimes.get(targetId)!, targetId, label });
      parentId = id;
    }
    return out;
  }
}
