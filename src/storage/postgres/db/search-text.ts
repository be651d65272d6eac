import { columnText } from "./column-text.ts";

/** The roles a search row has: who said it, or the assistant's thinking. */
export const SEARCH_ROLES = ["user", "assistant", "toolResult", "thinking"] as const;
export type SearchRole = (typeof SEARCH_ROLES)[number];

/**
 * Characters of one index row: a longer text (a huge tool output) is indexed whole, as several rows
 * (parts, `textParts`), so every word of it is searchable (issue 34). Bounds each tsvector
 * (PostgreSQL refuses one over 1 MB, and counts word positions only up to 16,383) and the work of a snippet.
 * @default 65536
 */
export const MAX_SEARCH_TEXT_CHARS = 65_536;

/** Characters a part repeats of the one before it, so that a phrase across the cut is found whole. @default 1024 */
export const PART_OVERLAP_CHARS = 1024;

/** `text` as the parts it is indexed in (one when it is short), never cut inside a surrogate pair. Pure. */
export function textParts(text: string): string[] {
  if (text.length <= MAX_SEARCH_TEXT_CHARS) return [text];
  const parts: string[] = [];
  let start = 0;
  for (;;) {
    let end = Math.min(text.length, start + MAX_SEARCH_TEXT_CHARS);
    if (end < text.length && /[\ud800-\udbff]/.test(text[end - 1]!)) end--;
    parts.push(text.slice(start, end));
    if (end >= text.length) return parts;
    start = end - PART_OVERLAP_CHARS;
    if (/[\udc00-\udfff]/.test(text[start]!)) start--;
  }
}

/** The searchable text of one entry for one role. */
export interface SearchText {
  role: SearchRole;
  /** Storable as `text` (no NUL, no lone surrogate); whole (indexed in parts, `textParts`). */
  text: string;
  /** The session's model in effect at this entry (the last one named up to it), else null. */
  model: string | null;
  /** The entry's `timestamp` as written, and as a time when it parses as one. */
  timestamp: string | null;
  at: Date | null;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Adds `text` to `parts[role]` (each role's texts joined by a newline). */
function add(parts: Map<SearchRole, string[]>, role: SearchRole, text: unknown): void {
  if (typeof text !== "string" || text.length === 0) return;
  const list = parts.get(role);
  if (list === undefined) parts.set(role, [text]);
  else list.push(text);
}

/** The text a message's `content` holds (a string, or text/thinking/toolCall blocks; images hold none). */
function addContent(parts: Map<SearchRole, string[]>, role: SearchRole, content: unknown): void {
  if (typeof content === "string") {
    add(parts, role, content);
    return;
  }
  if (!Array.isArray(content)) return;
  for (const block of content) {
    if (!isObject(block)) continue;
    if (block.type === "text") add(parts, role, block.text);
    else if (block.type === "thinking") add(parts, "thinking", block.thinking);
    else if (block.type === "toolCall" && role === "assistant") {
      const args = block.arguments === undefined ? "" : ` ${JSON.stringify(block.arguments)}`;
      add(parts, "assistant", `${typeof block.name === "string" ? block.name : ""}${args}`);
    }
  }
}

/** What one stored line gives the index: its texts, and the model it names (null: none). */
export interface SearchEntry {
  texts: SearchText[];
  /**
   * The model this entry names: an assistant message's `model`, a `model_change`'s `modelId` (or
   * `model`, `model.id`). The index gives every entry the session's model in effect (the last one
   * named up to it), as the file tree's index does.
   */
  model: string | null;
  /** The line is not a JSON object (kept in `entries` as it is; `verify` reports it). */
  malformed: boolean;
}

/** The model an entry names (see SearchEntry.model). */
function modelNamed(entry: Json): string | null {
  if (entry.type === "message" && isObject(entry.message) && entry.message.role === "assistant") {
    return typeof entry.message.model === "string" ? entry.message.model : null;
  }
  if (entry.type === "model_change") {
    if (typeof entry.modelId === "string") return entry.modelId;
    if (typeof entry.model === "string") return entry.model;
    if (isObject(entry.model) && typeof entry.model.id === "string") return entry.model.id;
  }
  return null;
}

/**
 * What one stored line contributes to the search index: one text per role of a `message` entry
 * (user, assistant with its tool calls, toolResult, and the assistant's thinking; pi's `!` shell
 * runs, role `bashExecution`, count as tool results), and the model it names. Every other entry,
 * and a line that is not JSON (kept in `entries` as it is), has no text. Each text's `model` is the
 * one `current` (the session's model in effect before this line) becomes. Pure.
 */
export function searchEntryOf(line: string, current: string | null = null): SearchEntry {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return { texts: [], model: null, malformed: true };
  }
  if (!isObject(entry)) return { texts: [], model: null, malformed: true };
  const named = modelNamed(entry);
  const model = named === null ? current : columnText(named);
  if (entry.type !== "message" || !isObject(entry.message)) return { texts: [], model: named === null ? null : model, malformed: false };
  const message = entry.message;
  const parts = new Map<SearchRole, string[]>();
  if (message.role === "user") addContent(parts, "user", message.content);
  else if (message.role === "assistant") addContent(parts, "assistant", message.content);
  else if (message.role === "toolResult") addContent(parts, "toolResult", message.content);
  else if (message.role === "bashExecution")
    add(parts, "toolResult", [message.command, message.output].filter((s) => typeof s === "string").join("\n"));
  const timestamp = typeof entry.timestamp === "string" ? columnText(entry.timestamp) : null;
  const ms = timestamp === null ? Number.NaN : Date.parse(timestamp);
  // a time PostgreSQL and every reader hold: years 1 to 9999
  const at = Number.isFinite(ms) && new Date(ms).getUTCFullYear() >= 1 && new Date(ms).getUTCFullYear() <= 9999 ? new Date(ms) : null;
  const texts: SearchText[] = [];
  for (const role of SEARCH_ROLES) {
    const joined = parts.get(role)?.join("\n");
    if (joined === undefined || joined.trim().length === 0) continue;
    texts.push({ role, text: columnText(joined), model, timestamp, at });
  }
  return { texts, model: named === null ? null : model, malformed: false };
}

/** The texts of `line` alone (no model in effect before it). */
export function searchTextsOf(line: string): SearchText[] {
  return searchEntryOf(line).texts;
}
