import { isRecord, type SessionEntry } from "../format/types.ts";

/** A block of a message, in the few kinds the readable exports tell apart. */
export type MessagePart =
  /** `literal`: text we put a value in (a model change, a shell command), never read as Markdown. */
  | { kind: "text"; text: string; literal?: true }
  | { kind: "thinking"; text: string; redacted: boolean }
  | { kind: "toolCall"; id: string; name: string; arguments: unknown }
  | { kind: "image"; mimeType: string; data: string }
  | { kind: "other"; value: unknown };

/** The parts of a message's `content`: a string is one text part; unknown blocks are kept as `other`. */
export function partsOf(content: unknown): MessagePart[] {
  if (typeof content === "string") return [{ kind: "text", text: content }];
  if (!Array.isArray(content)) return content === undefined || content === null ? [] : [{ kind: "other", value: content }];
  return content.map((block): MessagePart => {
    if (!isRecord(block)) return typeof block === "string" ? { kind: "text", text: block } : { kind: "other", value: block };
    if (block.type === "text" && typeof block.text === "string") return { kind: "text", text: block.text };
    if (block.type === "thinking" && typeof block.thinking === "string")
      return { kind: "thinking", text: block.thinking, redacted: block.redacted === true };
    if (block.type === "toolCall" && typeof block.name === "string")
      return { kind: "toolCall", id: typeof block.id === "string" ? block.id : "", name: block.name, arguments: block.arguments };
    if (block.type === "image" && typeof block.data === "string" && typeof block.mimeType === "string")
      return { kind: "image", mimeType: block.mimeType, data: block.data };
    if (block.type === "image" && isRecord(block.source) && typeof block.source.data === "string")
      return { kind: "image", mimeType: String(block.source.media_type ?? "image/png"), data: block.source.data };
    return { kind: "other", value: block };
  });
}

/** The text of the text parts, joined by blank lines. */
export function textOf(parts: readonly MessagePart[]): string {
  return parts
    .filter((p) => p.kind === "text")
    .map((p) => p.text)
    .join("\n\n");
}

/** What an entry is to a reader: a role and its parts, or a note (compaction, model change, …); null to leave out. */
export interface EntryView {
  entry: SessionEntry;
  /** `user`, `assistant`, `toolResult`, `system`, `custom`, `compaction`, `branch_summary`, … */
  role: string;
  parts: MessagePart[];
  /** For a tool result: the call it answers, the tool's name, whether it failed. */
  toolCallId?: string;
  toolName?: string;
  isError?: boolean;
  model?: string;
}

/** How one entry reads; entries that carry nothing to read (labels, usage, custom state) give null. */
export function viewOf(entry: SessionEntry): EntryView | null {
  if (entry.type === "message" && isRecord(entry.message)) {
    const m = entry.message;
    const role = typeof m.role === "string" ? m.role : "unknown";
    const view: EntryView = { entry, role, parts: partsOf(m.content) };
    if (typeof m.toolCallId === "string") view.toolCallId = m.toolCallId;
    if (typeof m.toolName === "string") view.toolName = m.toolName;
    if (m.isError === true) view.isError = true;
    if (typeof m.model === "string") view.model = m.model;
    if (role === "bashExecution" && typeof m.command === "string")
      view.parts = [{ kind: "text", text: `$ ${m.command}\n${typeof m.output === "string" ? m.output : ""}`, literal: true }];
    if ((role === "branchSummary" || role === "compactionSummary") && typeof m.summary === "string")
      view.parts = [{ kind: "text", text: m.summary }];
    return view;
  }
  if (entry.type === "custom_message") return { entry, role: "custom", parts: partsOf(entry.content) };
  if ((entry.type === "compaction" || entry.type === "branch_summary") && typeof entry.summary === "string")
    return { entry, role: entry.type, parts: [{ kind: "text", text: entry.summary }] };
  if (entry.type === "model_change") {
    const model = typeof entry.modelId === "string" ? entry.modelId : typeof entry.model === "string" ? entry.model : null;
    return model === null ? null : { entry, role: "model_change", parts: [{ kind: "text", text: `model: ${model}`, literal: true }] };
  }
  if (entry.type === "thinking_level_change" && typeof entry.thinkingLevel === "string")
    return {
      entry,
      role: "thinking_level_change",
      parts: [{ kind: "text", text: `thinking level: ${entry.thinkingLevel}`, literal: true }],
    };
  return null;
}

/** The heading each role or entry kind gets in a readable view (HTML, Markdown). */
export const TITLES: Record<string, string> = {
  user: "User",
  assistant: "Assistant",
  toolResult: "Tool result",
  system: "System",
  custom: "Extension message",
  compaction: "Compaction summary",
  branch_summary: "Branch summary",
  branchSummary: "Branch summary",
  compactionSummary: "Compaction summary",
  bashExecution: "Shell command",
  model_change: "Model change",
  thinking_level_change: "Thinking level change",
};

/** The heading of `role`: its title, else the role itself (an own property only: `constructor` is a role like any). */
export function titleOf(role: string): string {
  return Object.hasOwn(TITLES, role) ? TITLES[role]! : role;
}
