import { TranscriptStoreError } from "../errors.ts";
import type { SessionEntry } from "../format/types.ts";

/** Characters of a neighbour's text shown around an entry in context (the entry itself is whole). @default 300 */
export const NEIGHBOUR_CHARS = 300;

/** The entries from `before` ahead of the entry `id` to `after` past it, in the session's order; ENTRY_NOT_FOUND when absent. */
export function entryWindow<E extends { id: string }>(
  entries: readonly E[],
  id: string,
  before: number,
  after: number,
): { entries: E[]; at: number } {
  const index = entries.findIndex((e) => e.id === id);
  if (index === -1) throw new TranscriptStoreError("ENTRY_NOT_FOUND", `No entry ${id} in the session`);
  const from = Math.max(0, index - before);
  return { entries: entries.slice(from, index + after + 1), at: index - from };
}

/** An entry's text as `show` prints it: its message's text blocks (other blocks by type), a shell run's command and output. */
export function entryTextOf(e: SessionEntry): string {
  const msg = (e as { message?: { role?: string; content?: unknown; command?: unknown; output?: unknown } }).message;
  if (msg === undefined) return "";
  if (msg.role === "bashExecution") return [msg.command, msg.output].filter((s) => typeof s === "string").join("\n");
  if (typeof msg.content === "string") return msg.content;
  if (!Array.isArray(msg.content)) return "";
  return (msg.content as Array<{ type?: string; text?: string; thinking?: string; name?: string }>)
    .map((b) =>
      b.type === "text" ? b.text : b.type === "thinking" ? `[thinking] ${b.thinking ?? ""}` : `[${b.type}${b.name ? ` ${b.name}` : ""}]`,
    )
    .join("\n");
}

/**
 * An entry with its neighbours as text: a heading line per entry (`>` marks the one asked for, as a
 * match; `-` a neighbour), then its text indented: whole for the entry, cut at `NEIGHBOUR_CHARS`
 * (one line) for a neighbour. Plain text (the CLI passes it through its terminal writer).
 */
export function windowText(window: { entries: SessionEntry[]; at: number }): string {
  let out = "";
  window.entries.forEach((e, i) => {
    const role = (e as { message?: { role?: string } }).message?.role;
    const time = typeof e.timestamp === "string" ? e.timestamp.slice(0, 19).replace("T", " ") : "";
    out += `${i === window.at ? ">" : "-"} ${e.id}  ${e.type}${role ? `/${role}` : ""}  ${time}\n`;
    const text = entryTextOf(e);
    if (text === "") return;
    const shown = i === window.at ? text : text.replace(/\s+/gu, " ").trim().slice(0, NEIGHBOUR_CHARS);
    out += `${shown.replace(/^/gmu, "    ")}\n`;
  });
  return out.replace(/\n$/u, "");
}
