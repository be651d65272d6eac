import type { AgentMessage, SystemMessage } from "./types.ts";

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b !== null && typeof b === "object" && b.type === "text")
    .map((b) => String(b.text))
    .join("\n");
}

/**
 * The prompt and tool state the system messages among `messages` add up to, as one system message
 * (what pi 1.5.2 persists as a compaction's `systemMessage`): every non-empty content joined by a
 * blank line, sections patched by name in order (`null` removes one), tools removed then added by
 * name, the first system message's timestamp. Undefined when there is no system message and no tool.
 */
export function currentSystemMessage(messages: readonly AgentMessage[]): SystemMessage | undefined {
  const content: string[] = [];
  const sections = new Map<string, string>();
  const tools = new Map<string, unknown>();
  let timestamp: number | undefined;
  for (const message of messages) {
    if (message.role !== "system") continue;
    timestamp ??= message.timestamp;
    const text = textOf(message.content);
    if (text.length > 0) content.push(text);
    for (const [name, value] of Object.entries((message.sections ?? {}) as Record<string, string | null>)) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
    for (const tool of (message.toolsRemoved ?? []) as { name: string }[]) tools.delete(tool.name);
    for (const tool of (message.toolsAdded ?? []) as { name: string }[]) tools.set(tool.name, tool);
  }
  if (timestamp === undefined && tools.size === 0) return undefined;
  return {
    role: "system",
    content: content.join("\n\n"),
    ...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
    ...(tools.size > 0 ? { toolsAdded: [...tools.values()] } : {}),
    timestamp: timestamp ?? 0,
  };
}
