/**
 * One root → leaf path taken out of a session tree as a session of its own (a branched session, a
 * fork at an entry), keeping every reference inside it valid, as pi 1.5.2 does: label entries on
 * the path are left out (a label may name an entry off the path) and the path re-chained so no
 * entry points to a missing parent; a compaction's `firstKeptEntryId` naming a left-out label
 * moves to the entry that followed it; then one label entry per labelled entry of the path (its
 * current label, wherever in the tree it was set, with the time it was set) is chained at the end.
 * Entry ids are kept, so `context_edit` targets (earlier entries of the same path) still resolve.
 */

export interface PathEntry {
  type: string;
  id: string;
  parentId: string | null;
  timestamp: string;
}

/** A field of an entry, read as unknown. */
function field(entry: PathEntry, key: string): unknown {
  return (entry as unknown as Record<string, unknown>)[key];
}

/** A target's current label and when it was set. */
export interface CurrentLabel {
  label: string;
  timestamp: string;
}

/** Current labels by target id: the latest label entry of each target in file order (an empty label clears). */
export function currentLabels(entries: readonly PathEntry[]): Map<string, CurrentLabel> {
  const labels = new Map<string, CurrentLabel>();
  for (const entry of entries) {
    const target = field(entry, "targetId");
    const label = field(entry, "label");
    if (entry.type !== "label" || typeof target !== "string") continue;
    if (typeof label === "string" && label) labels.set(target, { label, timestamp: entry.timestamp });
    else labels.delete(target);
  }
  return labels;
}

/** The path as its own session: see the module comment. `newId` gives an id not in `taken`. */
export function extractPath<E extends PathEntry>(
  path: readonly E[],
  labels: ReadonlyMap<string, CurrentLabel>,
  newId: (taken: ReadonlySet<string>) => string,
): E[] {
  const kept: E[] = [];
  const labelSuccessor = new Map<string, string>();
  const pendingLabels: string[] = [];
  let parentId: string | null = null;
  for (const entry of path) {
    if (entry.type === "label") {
      pendingLabels.push(entry.id);
      continue;
    }
    for (const labelId of pendingLabels) labelSuccessor.set(labelId, entry.id);
    pendingLabels.length = 0;
    const copy = { ...entry, parentId };
    const firstKept = field(entry, "firstKeptEntryId");
    if (entry.type === "compaction" && typeof firstKept === "string" && firstKept !== entry.id)
      (copy as unknown as Record<string, unknown>).firstKeptEntryId = labelSuccessor.get(firstKept) ?? firstKept;
    kept.push(copy);
    parentId = entry.id;
  }
  const taken = new Set(kept.map((e) => e.id));
  const out = kept.slice();
  for (const [targetId, { label, timestamp }] of labels) {
    if (!taken.has(targetId)) continue;
    const id = newId(taken);
    taken.add(id);
    out.push({ type: "label", id, parentId, timestamp, targetId, label } as unknown as E);
    parentId = id;
  }
  return out;
}
