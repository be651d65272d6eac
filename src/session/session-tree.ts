import { applyContextEdit, contextEntries, latestContextEdits } from "../format/context-rules.ts";
import { isRecord, type SessionEntry, type SessionHeader } from "../format/types.ts";

/** A node of `getTree()`: an entry and its children in file order. */
export interface SessionTreeNode {
  entry: SessionEntry;
  children: SessionTreeNode[];
}

/** What a model sees at the leaf (`buildContext`; docs/format.md, Context at the leaf). */
export interface SessionContext {
  messages: Array<Record<string, unknown>>;
  /** The latest `model_change` on the path (its `model`, or `{provider, modelId}`), else the header's. */
  model: unknown;
  thinkingLevel: string | null;
}

/** Entries from the root down to `leafId` (inclusive), following `parentId`. */
export function pathToEntry(byId: ReadonlyMap<string, SessionEntry>, leafId: string | null): SessionEntry[] {
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  let id = leafId;
  while (id !== null) {
    const entry = byId.get(id);
    if (entry === undefined || seen.has(id)) break; // a broken or cyclic link ends the path
    seen.add(id);
    path.push(entry);
    id = typeof entry.parentId === "string" ? entry.parentId : null;
  }
  return path.reverse();
}

/** Roots with their descendants; entries whose parent is missing become roots. */
export function buildTree(entries: readonly SessionEntry[], byId: ReadonlyMap<string, SessionEntry>): SessionTreeNode[] {
  const nodes = new Map<string, SessionTreeNode>();
  for (const entry of entries) nodes.set(entry.id, { entry, children: [] });
  const roots: SessionTreeNode[] = [];
  for (const entry of entries) {
    const node = nodes.get(entry.id)!;
    const parent = typeof entry.parentId === "string" && byId.has(entry.parentId) ? nodes.get(entry.parentId) : undefined;
    if (parent && parent !== node) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}

function modelOf(entry: SessionEntry): unknown {
  if (entry.model !== undefined) return entry.model;
  if (typeof entry.provider === "string" || typeof entry.modelId === "string") return { provider: entry.provider, modelId: entry.modelId };
  return null;
}

function headerModel(header: SessionHeader | null): unknown {
  if (header === null) return null;
  if (typeof header.provider === "string" || typeof header.modelId === "string")
    return { provider: header.provider, modelId: header.modelId };
  return null;
}

/** The messages an entry contributes to the context: a compaction its systemMessage (if any) and summary. */
function toMessages(entry: SessionEntry): Array<Record<string, unknown>> {
  switch (entry.type) {
    case "message":
      return isRecord(entry.message) ? [entry.message] : [];
    case "custom_message":
      return [
        {
          role: "custom",
          customType: entry.customType,
          content: entry.content,
          display: entry.display,
          details: entry.details,
          timestamp: entry.timestamp,
        },
      ];
    case "branch_summary":
      return entry.summary ? [{ role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: entry.timestamp }] : [];
    case "compaction": {
      const summary = { role: "compactionSummary", summary: entry.summary, tokensBefore: entry.tokensBefore, timestamp: entry.timestamp };
      return isRecord(entry.systemMessage) ? [entry.systemMessage, summary] : [summary];
    }
    default:
      return [];
  }
}

/**
 * Messages on the root→leaf path by pi 1.5.2's rules (`contextEntries`: the latest compaction,
 * its kept range without system messages, what follows), each entry's latest context edit applied
 * (docs/format.md, Context at the leaf).
 */
export function buildSessionContext(path: readonly SessionEntry[], header: SessionHeader | null): SessionContext {
  let model = headerModel(header);
  let thinkingLevel: string | null = header !== null && typeof header.thinkingLevel === "string" ? header.thinkingLevel : null;
  for (const entry of path) {
    if (entry.type === "model_change") model = modelOf(entry);
    else if (entry.type === "thinking_level_change" && typeof entry.thinkingLevel === "string") thinkingLevel = entry.thinkingLevel;
  }
  const entries = contextEntries(path);
  const edits = latestContextEdits(entries);
  const messages: Array<Record<string, unknown>> = [];
  entries.forEach((entry, i) => {
    // Only the newest compaction (first) speaks; an older one inside its kept range adds nothing.
    if (entry.type === "compaction" && i > 0) return;
    messages.push(...applyContextEdit(toMessages(entry), edits.get(entry.id)));
  });
  return { messages, model, thinkingLevel };
}
