/**
 * pi 1.5.2 persists its prompt and tool state as system-role messages: in `message` entries and
 * as a compaction's `systemMessage`. It rebuilds every model request from them, so they are
 * written exactly: the transient-key and truncation stages leave them alone (a tool schema may
 * name a field `partialJson`; a system prompt may be long). Anywhere else the stages apply.
 */

/** Whether `value`, found at `parent[key]` of an entry's top level, is persisted prompt state. */
export function isPromptStateSlot(value: unknown, key: string | null, parentIsEntry: boolean): boolean {
  return (
    parentIsEntry &&
    (key === "message" || key === "systemMessage") &&
    typeof value === "object" &&
    value !== null &&
    (value as { role?: unknown }).role === "system"
  );
}
