import { isRecord, type RawRecord } from "../format/types.ts";

/**
 * What a session's bytes hold, by kind. Every byte of a session (file or rows) is in exactly one
 * kind, so the kinds of a session add up to its size.
 */
export interface ByteKinds {
  /** Message text: user and assistant text, string contents, compaction and branch summaries, custom messages. */
  text: number;
  /** Tool calls: an assistant's `toolCall` (or `tool_use`) blocks. */
  toolCalls: number;
  /** Tool results: `toolResult` messages (content and details) and pi's `bashExecution` output. */
  toolResults: number;
  /** Thinking blocks, their signatures and redacted thinking. */
  thinking: number;
  /** Image payloads still inline (base64 or data URLs that were not moved to the blob store). */
  inlineImages: number;
  /** Everything else: the header, entry metadata, model and label changes, JSON structure, newlines. */
  other: number;
  /** Lines that are not a JSON object with a `type` (kept in place until a rewrite quarantines them). */
  malformed: number;
  /** Lines too long to parse as one string: counted whole, never read into memory. */
  oversized: number;
}

/** The kinds, in the order reports print them. */
export const BYTE_KINDS: readonly (keyof ByteKinds)[] = [
  "text",
  "toolCalls",
  "toolResults",
  "thinking",
  "inlineImages",
  "other",
  "malformed",
  "oversized",
];

/** All kinds at zero. */
export function emptyByteKinds(): ByteKinds {
  return { text: 0, toolCalls: 0, toolResults: 0, thinking: 0, inlineImages: 0, other: 0, malformed: 0, oversized: 0 };
}

/** Adds `from` into `into` (kind by kind) and returns `into`. */
export function addByteKinds(into: ByteKinds, from: ByteKinds): ByteKinds {
  for (const k of BYTE_KINDS) into[k] += from[k];
  return into;
}

/** The sum of every kind. */
export function totalOf(kinds: ByteKinds): number {
  let n = 0;
  for (const k of BYTE_KINDS) n += kinds[k];
  return n;
}

/** Bytes of a value as JSON.stringify writes it (what a writer of this format put in the line). */
function jsonBytes(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text, "utf8");
}

/** An inline image payload: a string that is not a blob ref. */
function inlinePayload(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && !value.startsWith("blob:");
}

/**
 * Bytes of the inline image payloads in `value`, in the shapes docs/format.md externalizes:
 * `{type:"image", data}`, `{data, mimeType:"image/…"}`, `{type:"image", source:{type:"base64", data}}`
 * and `data:image/…` strings anywhere. Refs count nothing (their bytes are the blob's).
 */
export function inlineImageBytes(value: unknown, depth = 0): number {
  if (typeof value === "string") return value.startsWith("data:image/") ? jsonBytes(value) : 0;
  if (depth > 1000 || typeof value !== "object" || value === null) return 0;
  if (Array.isArray(value)) {
    let n = 0;
    for (const item of value) n += inlineImageBytes(item, depth + 1);
    return n;
  }
  const record = value as RawRecord;
  const isImage = record.type === "image" || (typeof record.mimeType === "string" && record.mimeType.startsWith("image/"));
  let n = 0;
  for (const [key, item] of Object.entries(record)) {
    if (isImage && key === "data" && inlinePayload(item)) n += jsonBytes(item);
    else if (isImage && key === "source" && isRecord(item) && item.type === "base64" && inlinePayload(item.data)) {
      n += jsonBytes(item.data);
    } else n += inlineImageBytes(item, depth + 1);
  }
  return n;
}

/** The kind of one content block of a message whose role gives `base`. */
function blockKind(block: unknown, base: keyof ByteKinds): keyof ByteKinds {
  if (base === "toolResults" || !isRecord(block)) return base;
  switch (block.type) {
    case "thinking":
    case "redacted_thinking":
      return "thinking";
    case "toolCall":
    case "tool_use":
    case "function_call":
      return "toolCalls";
    case "image":
      return "other"; // its payload, while inline, is counted as an image; a ref is structure
    default:
      return base;
  }
}

/** Adds a field's bytes to `kind`, its inline image payloads to `inlineImages`; returns the bytes placed. */
function place(kinds: ByteKinds, kind: keyof ByteKinds, value: unknown): number {
  if (value === undefined) return 0;
  const total = jsonBytes(value);
  const images = inlineImageBytes(value);
  kinds[kind] += total - images;
  return total - images;
}

/**
 * Adds the bytes of one parsed record to `kinds`, not counting `other` (the caller gives the line's
 * rest to it). Returns the bytes placed, inline images excluded (the caller counts them for the whole record).
 */
function placeRecord(kinds: ByteKinds, record: RawRecord): number {
  switch (record.type) {
    case "message": {
      const message = record.message;
      if (!isRecord(message)) return 0;
      const role = message.role;
      const base: keyof ByteKinds = role === "toolResult" || role === "tool" ? "toolResults" : "text";
      let placed = 0;
      if (role === "bashExecution") {
        placed += place(kinds, "toolResults", message.output);
        placed += place(kinds, "toolCalls", message.command);
      }
      if (base === "toolResults") placed += place(kinds, "toolResults", message.details);
      const content = message.content;
      if (Array.isArray(content)) for (const block of content) placed += place(kinds, blockKind(block, base), block);
      else placed += place(kinds, base, content);
      return placed;
    }
    case "compaction":
    case "branch_summary":
      return place(kinds, "text", record.summary);
    case "custom_message":
      return place(kinds, "text", record.content);
    default:
      return 0;
  }
}

/**
 * Classifies one line of a session. `bytes` is the line without its `\n`; `lineBytes` the bytes it
 * occupies (its `\n` included when it has one). Pure: the kinds returned add up to `lineBytes`.
 * `parsed` is the line's decoded records (null: not a record, counted `malformed`).
 */
export function classifyRecords(records: readonly RawRecord[] | null, lineBytes: number): ByteKinds {
  const kinds = emptyByteKinds();
  if (records === null) {
    kinds.malformed = lineBytes;
    return kinds;
  }
  let placed = 0;
  let images = 0;
  for (const record of records) {
    placed += placeRecord(kinds, record);
    images += inlineImageBytes(record);
  }
  if (placed + images > lineBytes) {
    // Not written by JSON.stringify (longer escapes are the only way a line is larger than its
    // re-serialization, never smaller): the line is counted whole as other rather than guessed.
    const whole = emptyByteKinds();
    whole.other = lineBytes;
    return whole;
  }
  kinds.inlineImages += images;
  kinds.other += lineBytes - placed - images;
  return kinds;
}
