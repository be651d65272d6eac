import { applyContextEdit, isSystemMessageEntry, latestContextEdits } from "../format/context-rules.ts";
import { isRecord, type RawRecord, type SessionEntry } from "../format/types.ts";

/**
 * One step of a conversation as another agent's transcript writes it, made from a session's path:
 * `entry` is the entry it came from; `replay` names the compaction whose kept range it repeats.
 *
 * - `user`, `assistant`, `toolResult`: a message the target expresses natively (`message`: the
 *   entry's message, images inline, its latest context edit applied).
 * - `note`: a message the target has no role for (`bashExecution`, `custom`, a branch summary, a
 *   `custom_message`): sent as a user message of `text`, the entry kept in the target's extension.
 * - `compaction`: the summary; the steps of its kept range follow it again (`replay`).
 * - `kept`: no message (model and thinking-level changes, labels, custom entries, system prompts, …):
 *   only in the target's extension.
 */
export type ConvertStep =
  | { kind: "user" | "assistant" | "toolResult"; entry: SessionEntry; message: RawRecord; replay?: string }
  | { kind: "note"; entry: SessionEntry; text: string; replay?: string }
  | { kind: "compaction"; entry: SessionEntry; summary: string; tokensBefore: number }
  | { kind: "kept"; entry: SessionEntry; why: string };

/** The text of a message's text blocks (a string content is its own text). */
export function plainText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b) => (isRecord(b) && b.type === "text" && typeof b.text === "string" ? b.text : "")).join("");
}

/** What a `bashExecution` message says to the model (the command, its output, how it ended). */
function bashText(m: RawRecord): string {
  const out = typeof m.output === "string" ? m.output : "";
  const code = typeof m.exitCode === "number" ? `\n(exit code ${m.exitCode})` : m.cancelled === true ? "\n(cancelled)" : "";
  return `Ran \`${String(m.command ?? "")}\`\n\`\`\`\n${out}\n\`\`\`${code}`;
}

/** The step of one entry (not a compaction), or null when it contributes nothing. */
function stepOf(entry: SessionEntry, edit: SessionEntry | undefined, replay?: string): ConvertStep | null {
  const tag = replay === undefined ? {} : { replay };
  if (entry.type === "message" && isRecord(entry.message)) {
    const edited = applyContextEdit([entry.message as RawRecord], edit);
    if (edited.length === 0) return { kind: "kept", entry, why: "removed from the context by a context edit" };
    const message = edited[0]!;
    const role = message.role;
    if (role === "user" || role === "assistant" || role === "toolResult") return { kind: role, entry, message, ...tag };
    if (role === "bashExecution") return { kind: "note", entry, text: bashText(message), ...tag };
    if (role === "custom") return { kind: "note", entry, text: plainText(message.content), ...tag };
    if (role === "branchSummary" || role === "compactionSummary")
      return { kind: "note", entry, text: typeof message.summary === "string" ? message.summary : "", ...tag };
    return { kind: "kept", entry, why: `a ${String(role)} message` };
  }
  if (entry.type === "custom_message") return { kind: "note", entry, text: plainText(entry.content), ...tag };
  if (entry.type === "branch_summary" && typeof entry.summary === "string" && entry.summary !== "")
    return { kind: "note", entry, text: entry.summary, ...tag };
  return { kind: "kept", entry, why: `a ${entry.type} entry` };
}

/**
 * The steps of a root → leaf path, in order. A compaction is its summary followed again by the
 * messages of its kept range (`firstKeptEntryId` up to it, system messages left out), so that a
 * reader that starts at the summary (as Claude Code and Codex do) sees what pi's context holds.
 * Each message gets its latest context edit (`context_edit` entries are kept). Images must be
 * inline already (rehydrate the path first).
 */
export function* convertSteps(path: readonly SessionEntry[]): Generator<ConvertStep> {
  const edits = latestContextEdits(path);
  for (let i = 0; i < path.length; i++) {
    const entry = path[i]!;
    if (entry.type !== "compaction") {
      const step = stepOf(entry, edits.get(entry.id));
      if (step !== null) yield step;
      continue;
    }
    yield {
      kind: "compaction",
      entry,
      summary: typeof entry.summary === "string" ? entry.summary : "",
      tokensBefore: typeof entry.tokensBefore === "number" ? entry.tokensBefore : 0,
    };
    const first = path.findIndex((e) => e.id === entry.firstKeptEntryId);
    if (first === -1 || first >= i) continue;
    for (const kept of path.slice(first, i)) {
      if (kept.type === "compaction" || isSystemMessageEntry(kept)) continue;
      const step = stepOf(kept, edits.get(kept.id), entry.id);
      if (step !== null && step.kind !== "kept") yield step;
    }
  }
}

/** The entry without what a converted record already says (its message's content): the rest goes in the extension. */
export function entryRest(entry: SessionEntry): RawRecord {
  const { foreign: _foreign, ...rest } = entry;
  if (isRecord(rest.message)) {
    const { content: _content, ...message } = rest.message;
    return { ...rest, message };
  }
  return rest;
}
