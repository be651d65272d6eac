import type { FileEntry, LabelEntry, SessionEntry } from "./types.ts";

/** A user or assistant message: what makes pi 1.5.2 create a session's file. */
function isConversation(entry: FileEntry): boolean {
  return entry.type === "message" && (entry.message?.role === "user" || entry.message?.role === "assistant");
}

/** What a session knows about its entries beyond their order: ids, current labels, a conversation yet. */
export class EntryIndex {
  readonly byId = new Map<string, SessionEntry>();
  readonly labels = new Map<string, string>();
  readonly labelTimes = new Map<string, string>();
  hasConversation = false;

  /** Indexes `entries` from scratch; returns the last entry's id (the leaf), or null. */
  rebuild(entries: readonly FileEntry[]): string | null {
    this.byId.clear();
    this.labels.clear();
    this.labelTimes.clear();
    this.hasConversation = false;
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
    this.hasConversation ||= isConversation(entry);
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
}
