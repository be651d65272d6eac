import type { SessionEntry, SessionTreeNode } from "./types.ts";

/**
 * The entries as a forest, as pi builds it: each node carries its entry's current label and the
 * label's time; an entry whose parent is null, itself or unknown is a root; children sorted by
 * timestamp (oldest first). Fresh nodes: changing them changes nothing in the session.
 */
export function buildPiTree(entries: SessionEntry[], labels: Map<string, string>, labelTimes: Map<string, string>): SessionTreeNode[] {
  const nodes = new Map<string, SessionTreeNode>();
  for (const entry of entries)
    nodes.set(entry.id, { entry, children: [], label: labels.get(entry.id), labelTimestamp: labelTimes.get(entry.id) });
  const roots: SessionTreeNode[] = [];
  for (const entry of entries) {
    const node = nodes.get(entry.id)!;
    const parent = entry.parentId === null || entry.parentId === entry.id ? undefined : nodes.get(entry.parentId);
    if (parent === undefined) roots.push(node);
    else parent.children.push(node);
  }
  const time = (n: SessionTreeNode) => new Date(n.entry.timestamp).getTime();
  const stack = [...roots];
  while (stack.length > 0) {
    const node = stack.pop()!;
    node.children.sort((a, b) => time(a) - time(b));
    stack.push(...node.children);
  }
  return roots;
}
