import type { OwnStrings, RedactionCounts, SecretRedactor } from "../prepare/redact-secrets.ts";

/** An image as a data URL (Codex's `input_image`, a user message's `images`): image data, never text. */
const DATA_IMAGE = /^data:image\/[A-Za-z0-9.+-]+;base64,/;

/**
 * What a transcript record keeps as it is, beyond the redactor's own rules: image data URLs
 * wherever they sit, the opaque `data` of Claude's `redacted_thinking`. Ids and times are read
 * like any string (none looks like a secret; one holding a secret gets its marker everywhere, so a
 * call and its output stay linked). A string holding JSON, Codex's `arguments`, stays JSON: the
 * redactor sees to that.
 */
const ownStrings: OwnStrings = (text, key, parent) => {
  if (DATA_IMAGE.test(text)) return text;
  if (key === "data" && parent?.type === "redacted_thinking") return text;
  return undefined;
};

/**
 * A redactor of Claude Code and Codex records as they are shared (`export --to claude-code|codex`):
 * every secret in their strings (prompts, tool inputs and outputs, `toolUseResult`, thinking)
 * becomes the store's marker (an id too, when it holds one); structural ids, times, the structure,
 * image data, signatures and `encrypted_content` stay as they are. The same record back when nothing was found.
 */
export function foreignRecordRedactor(redactor: SecretRedactor, counts: RedactionCounts): <T>(record: T) => T {
  return (record) => redactor.redactValue(record, counts, ownStrings);
}
