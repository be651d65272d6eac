/**
 * pi 1.5.2's rules for what a model sees at a leaf, on plain entries (docs/format.md, Context at
 * the leaf). Shared by the engine's `buildContext` and the pi facade, which differ only in how they
 * turn an entry into messages (timestamps, the summary messages' shapes).
 */

/** The fields every entry of either format has; the others are read as unknown. */
export interface ContextEntry {
  type: string;
  id: string;
}

/** A field of an entry, read as unknown. */
function field(entry: ContextEntry, key: string): unknown {
  return (entry as unknown as Record<string, unknown>)[key];
}

/** Whether a `message` entry holds a system-role message (persisted prompt state). */
export function isSystemMessageEntry(entry: ContextEntry): boolean {
  const message = field(entry, "message") as { role?: unknown } | null | undefined;
  return entry.type === "message" && typeof message === "object" && message !== null && message.role === "system";
}

/**
 * The compaction-aware entries of a root → leaf path. Without a compaction: the path. With one,
 * the latest: that compaction first, then the entries from its `firstKeptEntryId` up to it
 * (system-role messages left out: the compaction's `systemMessage` stands for them), then every
 * entry after it. A `firstKeptEntryId` not before the compaction (its own id: a retain-none
 * compaction) keeps nothing from before it.
 */
export function contextEntries<E extends ContextEntry>(path: readonly E[]): E[] {
  let at = -1;
  for (let i = 0; i < path.length; i++) if (path[i]!.type === "compaction") at = i;
  if (at === -1) return path.slice();
  const compaction = path[at]!;
  const out: E[] = [compaction];
  let kept = false;
  for (let i = 0; i < at; i++) {
    const entry = path[i]!;
    if (entry.id === field(compaction, "firstKeptEntryId")) kept = true;
    if (kept && !isSystemMessageEntry(entry)) out.push(entry);
  }
  for (let i = at + 1; i < path.length; i++) out.push(path[i]!);
  return out;
}

/** The latest `context_edit` of each target among `entries` (branch-relative: only edits on the path count). */
export function latestContextEdits<E extends ContextEntry>(entries: readonly E[]): Map<string, E> {
  const edits = new Map<string, E>();
  for (const entry of entries) {
    const target = field(entry, "targetId");
    if (entry.type === "context_edit" && typeof target === "string") edits.set(target, entry);
  }
  return edits;
}

const EDITABLE_ROLES: ReadonlySet<string> = new Set(["user", "assistant", "toolResult", "custom"]);

/**
 * `messages` (what one entry contributes) after its latest context edit: none when the edit's
 * replacement is null, else each user/assistant/toolResult/custom message with its content
 * replaced (a string becomes one text block for assistant and tool results). Other messages (the
 * system message a compaction carries) are unchanged. A malformed edit changes nothing.
 */
export function applyContextEdit<M extends { role?: unknown }>(messages: M[], edit: ContextEntry | undefined): M[] {
  if (edit === undefined) return messages;
  const replacement = field(edit, "replacement") as { content?: unknown } | null | undefined;
  if (replacement === null) return [];
  if (typeof replacement !== "object" || replacement === undefined || !("content" in replacement)) return messages;
  return messages.map((message) => {
    const role = message.role;
    if (typeof role !== "string" || !EDITABLE_ROLES.has(role)) return message;
    const content =
      (role === "assistant" || role === "toolResult") && typeof replacement.content === "string"
        ? [{ type: "text", text: replacement.content }]
        : replacement.content;
    return { ...message, content };
  });
}
