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

/** The message an entry contributes to the context, if any. */
function toMessage(entry: SessionEntry): Record<string, unknown> | null {
  switch (entry.type) {
    case "message":
      return isRecord(entry.message) ? entry.message : null;
    case "custom_message":
      return {
        role: "custom",
        customType: entry.customType,
        content: entry.content,
        display: entry.display,
        details: entry.details,
        timestamp: entry.timestamp,
      };
    case "branch_summary":
      return { role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: entry.timestamp };
    default:
      return null;
  }
}

/**
 * Messages on the root→leaf path, honouring the latest compaction on it: its summary first, then
 * the kept entries from `firstKeptEntryId` up to the compaction, then everything after it.
 */
export function buildSessionContext(path: readonly SessionEntry[], header: SessionHeader | null): SessionContext {
  let model = headerModel(header);
  let thinkingLevel: string | null = header !== null && typeof header.thinkingLevel === "string" ? header.thinkingLevel : null;
  let compactionIndex = -1;
  for (let i = 0; i < path.length; i++) {
    const entry = path[i]!;
    if (entry.type === "model_change") model = modelOf(entry);
    else if (entry.type === "thinking_level_change" && typeof entry.thinkingLevel === "string") thinkingLevel = entry.thinkingLevel;
    else if (entry.type === "compaction") compactionIndex = i;
  }
  const messages: Array<Record<string, unknown>> = [];
  const push = (entry: SessionEntry) => {
    const message = toMessage(entry);
    if (message !== null) messages.push(message);
  };
  if (compactionIndex === -1) {
    for (const entry of path) push(entry);
    return { messages, model, thinkingLevel };
  }
  const compaction = path[compactionIndex]!;
  messages.push({
    role: "compactionSummary",
    summary: compaction.summary,
    tokensBefore: compaction.tokensBefore,
    timestamp: compaction.timestamp,
  });
  const keptFrom = path.findIndex((e) => e.id === compaction.firstKeptEntryId);
  if (keptFrom !== -1 && keptFrom < compactionIndex) for (let i = keptFrom; i < compactionIndex; i++) push(path[i]!);
  for (let i = compactionIndex + 1; i < path.length; i++) push(path[i]!);
  return { messages, model, thinkingLevel };
}
