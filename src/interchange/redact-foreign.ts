import type { OwnStrings, RedactionCounts, SecretRedactor } from "../prepare/redact-secrets.ts";

/**
 * The keys of Claude Code's and Codex's records that hold ids, links and times (never redacted): a
 * record keeps its place in the agent's tree and its tool calls their results. `id` and the
 * format's own ids are kept by the redactor itself.
 */
const FOREIGN_ID_KEYS: ReadonlySet<string> = new Set([
  "uuid",
  "parentUuid",
  "logicalParentUuid",
  "leafUuid",
  "sessionId",
  "session_id",
  "requestId",
  "messageId",
  "promptId",
  "agentId",
  "tool_use_id",
  "toolUseID",
  "sourceToolUseID",
  "parentToolUseID",
  "sourceToolAssistantUUID",
  "call_id",
  "turn_id",
  "thread_id",
  "parent_thread_id",
  "new_thread_id",
  "process_id",
  "timestamp",
]);

/** An image as a data URL (Codex's `input_image`, a user message's `images`): image data, never text. */
const DATA_IMAGE = /^data:image\/[A-Za-z0-9.+-]+;base64,/;

/**
 * What a transcript record keeps as it is, beyond the redactor's own rules: ids and times, image
 * data URLs wherever they sit, the opaque `data` of Claude's `redacted_thinking`. (A string holding
 * JSON, Codex's `arguments`, stays JSON: the redactor sees to that.)
 */
const ownStrings: OwnStrings = (text, key, parent) => {
  if (key !== null && FOREIGN_ID_KEYS.has(key)) return text;
  if (DATA_IMAGE.test(text)) return text;
  if (key === "data" && parent?.type === "redacted_thinking") return text;
  return undefined;
};

/**
 * A redactor of Claude Code and Codex records as they are shared (`export --to claude-code|codex`):
 * every secret in their strings (prompts, tool inputs and outputs, `toolUseResult`, thinking)
 * becomes the store's marker; ids, times, the structure, image data, signatures and
 * `encrypted_content` stay as they are. The same record back when nothing was found.
 */
export function foreignRecordRedactor(redactor: SecretRedactor, counts: RedactionCounts): <T>(record: T) => T {
  return (record) => redactor.redactValue(record, counts, ownStrings);
}
