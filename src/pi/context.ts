import { applyContextEdit, contextEntries, latestContextEdits } from "../format/context-rules.ts";
import type {
  AgentMessage,
  CompactionEntry,
  ContextEditEntry,
  ProjectedSessionEntry,
  SessionContext,
  SessionEntry,
  SessionProjection,
} from "./types.ts";

/** Milliseconds of an ISO timestamp, as pi's summary and custom messages carry it. */
function millis(timestamp: string): number {
  return new Date(timestamp).getTime();
}

/**
 * What one entry contributes to the model's messages, as pi 1.5.2 projects it: a message (a
 * missing content read as empty), a custom message, a branch summary (when it has text), a
 * compaction (its persisted system message, then its summary); nothing for the others.
 */
export function sessionEntryToContextMessages(entry: SessionEntry): AgentMessage[] {
  switch (entry.type) {
    case "message": {
      const message = entry.message;
      if (message.role === "system" && message.content == null) return [{ ...message, content: "" }];
      if ((message.role === "user" || message.role === "assistant" || message.role === "toolResult") && message.content == null)
        return [{ ...message, content: [] }];
      return [message];
    }
    case "custom_message": {
      const { customType, content, display, details, timestamp } = entry;
      return [{ role: "custom", customType, content: content ?? [], display, details, timestamp: millis(timestamp) }];
    }
    case "branch_summary":
      return entry.summary
        ? [{ role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: millis(entry.timestamp) }]
        : [];
    case "compaction": {
      const summary = {
        role: "compactionSummary",
        summary: entry.summary,
        tokensBefore: entry.tokensBefore,
        timestamp: millis(entry.timestamp),
      };
      return entry.systemMessage ? [entry.systemMessage, summary] : [summary];
    }
    default:
      return [];
  }
}

/** One entry's messages after `edit` (its latest context edit on the path), as pi projects them. */
export function projectContextEntry(entry: SessionEntry, edit: ContextEditEntry | undefined): AgentMessage[] {
  return applyContextEdit(sessionEntryToContextMessages(entry), edit);
}

/** The last compaction entry of a list, or null. */
export function getLatestCompactionEntry(entries: SessionEntry[]): CompactionEntry | null {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.type === "compaction") return entry;
  }
  return null;
}

/** root → the leaf (`leafId` null → none; undefined or unknown → the last entry), stopping at a cycle. */
function pathAt(entries: SessionEntry[], leafId: string | null | undefined, byId?: Map<string, SessionEntry>): SessionEntry[] {
  if (leafId === null) return [];
  const index = byId ?? new Map(entries.map((e) => [e.id, e] as const));
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  let at: SessionEntry | undefined = (leafId ? index.get(leafId) : undefined) ?? entries[entries.length - 1];
  while (at !== undefined && !seen.has(at.id)) {
    seen.add(at.id);
    path.push(at);
    at = at.parentId ? index.get(at.parentId) : undefined;
  }
  return path.reverse();
}

/**
 * The compaction-aware entries at the leaf (pi's `buildContextEntries`): the path, or with a
 * compaction on it the latest compaction, the kept entries before it (system messages left out)
 * and every entry after it.
 */
export function buildContextEntries(entries: SessionEntry[], leafId?: string | null, byId?: Map<string, SessionEntry>): SessionEntry[] {
  return contextEntries(pathAt(entries, leafId, byId));
}

/**
 * What the model sees at the leaf, each message with the entry it comes from: the latest thinking
 * level and model on the path (an assistant message's provider/model counts as a model change),
 * and the messages of `buildContextEntries` after the latest context edit of each (an older
 * compaction kept inside the newest one's range contributes nothing).
 */
export function buildSessionProjection(
  entries: SessionEntry[],
  leafId?: string | null,
  byId?: Map<string, SessionEntry>,
): SessionProjection {
  const path = pathAt(entries, leafId, byId);
  let thinkingLevel = "off";
  let model: SessionProjection["model"] = null;
  for (const entry of path) {
    if (entry.type === "thinking_level_change") thinkingLevel = entry.thinkingLevel;
    else if (entry.type === "model_change") model = { provider: entry.provider, modelId: entry.modelId };
    else if (entry.type === "message" && entry.message.role === "assistant")
      model = { provider: entry.message.provider as string, modelId: entry.message.model as string };
  }
  const inContext = contextEntries(path);
  const edits = latestContextEdits(inContext) as Map<string, ContextEditEntry>;
  const projected: ProjectedSessionEntry[] = inContext.map((sourceEntry, i) => ({
    sourceEntry,
    messages: sourceEntry.type === "compaction" && i > 0 ? [] : projectContextEntry(sourceEntry, edits.get(sourceEntry.id)),
  }));
  return { entries: projected, messages: projected.flatMap((e) => e.messages), thinkingLevel, model };
}

/** What the model sees at the leaf: `buildSessionProjection` without the source entries. */
export function buildSessionContext(entries: SessionEntry[], leafId?: string | null, byId?: Map<string, SessionEntry>): SessionContext {
  const { messages, thinkingLevel, model } = buildSessionProjection(entries, leafId, byId);
  return { messages, thinkingLevel, model };
}
