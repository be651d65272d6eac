import { isRecord, type RawRecord } from "../format/types.ts";

/** The roles a search can filter on: what an entry's text is. */
export const SEARCH_ROLES = ["user", "assistant", "toolResult", "thinking"] as const;
export type SearchRole = (typeof SEARCH_ROLES)[number];

/** One searchable text of an entry: an assistant message gives one for its text and one for its thinking. */
export interface EntryText {
  role: SearchRole;
  text: string;
  /** Spilled outputs the text points to (`artifact://<n>`, `agent://<id>`): their content is indexed too. */
  artifacts: string[];
}

const OUTPUT_URL = /(?:artifact:\/\/\d{1,15}|agent:\/\/[A-Za-z0-9_.-]{1,200})/g;

/** Appends `part` to `parts` (whole: every word of a text is searchable, issue 34). */
function push(parts: string[], part: string): void {
  if (part.length > 0) parts.push(part);
}

/** Text blocks (and a string content) of a message, plus tool calls' names and arguments for an assistant. */
function contentTexts(content: unknown, wanted: "text" | "thinking", withToolCalls: boolean): string[] {
  const parts: string[] = [];
  if (typeof content === "string") {
    if (wanted === "text") push(parts, content);
    return parts;
  }
  if (!Array.isArray(content)) return parts;
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (wanted === "text" && block.type === "text" && typeof block.text === "string") push(parts, block.text);
    else if (wanted === "thinking" && block.type === "thinking" && typeof block.thinking === "string") push(parts, block.thinking);
    else if (wanted === "text" && withToolCalls && block.type === "toolCall") {
      if (typeof block.name === "string") push(parts, block.name);
      if (block.arguments !== undefined) push(parts, stringifyBounded(block.arguments));
    }
  }
  return parts;
}

function stringifyBounded(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
}

function entryText(role: SearchRole, parts: string[]): EntryText | null {
  const text = parts.join("\n");
  if (text.trim().length === 0) return null;
  const artifacts = role === "toolResult" ? [...new Set(Array.from(text.matchAll(OUTPUT_URL), (m) => m[0]))] : [];
  return { role, text, artifacts };
}

/**
 * The searchable texts of one entry record (pure): a user message's text; an assistant message's
 * text with its tool calls (name and arguments), and apart its thinking; a tool result's text; a
 * shell execution (`bashExecution`, pi) as a tool result (command and output). Other entries
 * (model changes, labels, compactions' derived summaries) hold nothing to search. Each text is
 * whole (a line is at most `MAX_INDEXED_LINE_BYTES`).
 */
export function entryTexts(record: RawRecord): EntryText[] {
  if (record.type !== "message" || !isRecord(record.message)) return [];
  const message = record.message;
  const out: (EntryText | null)[] = [];
  switch (message.role) {
    case "user":
      out.push(entryText("user", contentTexts(message.content, "text", false)));
      break;
    case "assistant":
      out.push(entryText("assistant", contentTexts(message.content, "text", true)));
      out.push(entryText("thinking", contentTexts(message.content, "thinking", false)));
      break;
    case "toolResult":
      out.push(entryText("toolResult", contentTexts(message.content, "text", false)));
      break;
    case "bashExecution": {
      const parts: string[] = [];
      if (typeof message.command === "string") push(parts, message.command);
      if (typeof message.output === "string") push(parts, message.output);
      out.push(entryText("toolResult", parts));
      break;
    }
  }
  return out.filter((t): t is EntryText => t !== null);
}

/** The model an entry names: an assistant message's `model`, a model change's `modelId` (or `model.id`/`model`). */
export function entryModel(record: RawRecord): string | null {
  if (record.type === "message" && isRecord(record.message) && record.message.role === "assistant") {
    return typeof record.message.model === "string" ? record.message.model : null;
  }
  if (record.type === "model_change") {
    if (typeof record.modelId === "string") return record.modelId;
    if (typeof record.model === "string") return record.model;
    if (isRecord(record.model) && typeof record.model.id === "string") return record.model.id;
  }
  return null;
}
