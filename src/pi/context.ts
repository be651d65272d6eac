import type { AgentMessage, CompactionEntry, SessionContext, SessionEntry } from "./types.ts";

/** Milliseconds of an ISO timestamp, as pi's summary and custom messages carry it. */
function millis(timestamp: string): number {
  return new Date(timestamp).getTime();
}

/** The message a `custom_message` entry contributes (role "custom"). */
function customMessage(entry: Extract<SessionEntry, { type: "custom_message" }>): AgentMessage {
  const { customType, content, display, details, timestamp } = entry;
  return { role: "custom", customType, content, display, details, timestamp: millis(timestamp) };
}

/** What one entry on the path contributes to the LLM's messages, if anything. */
function messageOf(entry: SessionEntry): AgentMessage | null {
  switch (entry.type) {
    case "message":
      return entry.message;
    case "custom_message":
      return customMessage(entry);
    case "branch_summary":
      return entry.summary
        ? { role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: millis(entry.timestamp) }
        : null;
    default:
      return null;
  }
}

/** The last compaction entry of a list, or null. */
export function getLatestCompactionEntry(entries: SessionEntry[]): CompactionEntry | null {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.type === "compaction") return entry;
  }
  return null;
}

/** root → leaf, following parentIds through `byId`. */
function pathTo(leaf: SessionEntry, byId: Map<string, SessionEntry>): SessionEntry[] {
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  for (let at: SessionEntry | undefined = leaf; at !== undefined && !seen.has(at.id); ) {
    seen.add(at.id);
    path.push(at);
    at = at.parentId ? byId.get(at.parentId) : undefined;
  }
  return path.reverse();
}

/**
 * What the LLM sees at `leafId`: the path root → leaf, its latest thinking level and model (an
 * assistant message's provider/model counts as a model change), and its messages. With a
 * compaction on the path: the compaction summary first, then the kept messages from
 * `firstKeptEntryId` up to the compaction, then everything after it. `leafId` null → nothing;
 * undefined or unknown → the last entry.
 */
export function buildSessionContext(entries: SessionEntry[], leafId?: string | null, byId?: Map<string, SessionEntry>): SessionContext {
  const index = byId ?? new Map(entries.map((e) => [e.id, e] as const));
  const empty: SessionContext = { messages: [], thinkingLevel: "off", model: null };
  if (leafId === null) return empty;
  const leaf = (leafId ? index.get(leafId) : undefined) ?? entries[entries.length - 1];
  if (leaf === undefined) return empty;
  const path = pathTo(leaf, index);

  let thinkingLevel = "off";
  let model: SessionContext["model"] = null;
  let compaction: CompactionEntry | null = null;
  for (const entry of path) {
    if (entry.type === "thinking_level_change") thinkingLevel = entry.thinkingLevel;
    else if (entry.type === "model_change") model = { provider: entry.provider, modelId: entry.modelId };
    else if (entry.type === "message" && entry.message.role === "assistant") {
      model = { provider: entry.message.provider as string, modelId: entry.message.model as string };
    } else if (entry.type === "compaction") compaction = entry;
  }

  const messages: AgentMessage[] = [];
  const add = (entry: SessionEntry) => {
    const message = messageOf(entry);
    if (message !== null) messages.push(message);
  };
  if (compaction === null) {
    path.forEach(add);
    return { messages, thinkingLevel, model };
  }
  const c = compaction;
  messages.push({ role: "compactionSummary", summary: c.summary, tokensBefore: c.tokensBefore, timestamp: millis(c.timestamp) });
  const at = path.findIndex((e) => e.id === c.id);
  const firstKept = path.findIndex((e, i) => i < at && e.id === c.firstKeptEntryId);
  if (firstKept !== -1) path.slice(firstKept, at).forEach(add);
  path.slice(at + 1).forEach(add);
  return { messages, thinkingLevel, model };
}
