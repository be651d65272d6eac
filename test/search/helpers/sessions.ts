import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** One JSONL line. */
export function line(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

export function header(id: string, cwd: string, timestamp = "2026-01-01T00:00:00.000Z"): string {
  return line({ type: "session", version: 3, id, timestamp, cwd });
}

let counter = 0;

/** A message entry line: text for user/assistant/toolResult, `thinking` for an assistant's thinking block. */
export function message(
  role: "user" | "assistant" | "toolResult",
  text: string,
  fields: { id?: string; timestamp?: string; model?: string; thinking?: string } = {},
): string {
  const content: unknown[] = [];
  if (fields.thinking !== undefined) content.push({ type: "thinking", thinking: fields.thinking });
  content.push({ type: "text", text });
  const msg: Record<string, unknown> = { role, content };
  if (fields.model !== undefined) msg.model = fields.model;
  if (role === "toolResult") Object.assign(msg, { toolCallId: "call", toolName: "bash" });
  return line({
    type: "message",
    id: fields.id ?? `e${(++counter).toString(16).padStart(7, "0")}`,
    parentId: null,
    timestamp: fields.timestamp ?? "2026-01-01T00:00:01.000Z",
    message: msg,
  });
}

/** Writes a session file `<sessionsDir>/<bucket>/<id>.jsonl` and returns its path. */
export function writeSession(sessionsDir: string, bucket: string, id: string, cwd: string, body: string): string {
  const dir = join(sessionsDir, bucket);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `2026-01-01T00-00-00-000Z_${id}.jsonl`);
  writeFileSync(path, header(id, cwd) + body);
  return path;
}

export function append(path: string, text: string): void {
  appendFileSync(path, text);
}
