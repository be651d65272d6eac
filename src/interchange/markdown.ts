import { escapeHtml, fenceFor, imageDataUrl } from "./html-text.ts";
import { markdownCode, markdownInline, oneLine } from "./markdown-text.ts";
import { type EntryView, type MessagePart, titleOf, viewOf } from "./message-parts.ts";
import { branchOf, type TranscriptSource } from "./transcript-source.ts";

function fenced(text: string, info = ""): string {
  const fence = fenceFor(text);
  return `${fence}${info}\n${text}\n${fence}`;
}

/**
 * A folded block: `<details>` with a summary and Markdown inside. The summary is on one line (its
 * HTML block never ends early) and escaped as HTML, the marks of links, images and code too (a
 * renderer that reads Markdown there finds none).
 */
function folded(summary: string, body: string): string {
  const label = escapeHtml(oneLine(summary)).replace(/[![\]`\\]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<details><summary>${label}</summary>\n\n${body}\n\n</details>`;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? String(value);
}

function partMarkdown(part: MessagePart): string {
  switch (part.kind) {
    case "text":
      // Text a value of ours was put in (a model change, a shell command) is no Markdown.
      return part.literal !== true ? part.text : part.text.includes("\n") ? fenced(part.text, "text") : markdownInline(part.text);
    case "thinking":
      return folded("Thinking", part.redacted ? "_(redacted by the provider)_" : fenced(part.text, "text"));
    case "toolCall":
      return folded(`Tool call: ${part.name}${part.id === "" ? "" : ` (${part.id})`}`, fenced(json(part.arguments), "json"));
    case "image": {
      const url = imageDataUrl(part.mimeType, part.data);
      return url === null ? `_[image of type ${part.mimeType} that is not base64 image data]_` : `![image](${url})`;
    }
    default:
      return folded("Other content", fenced(json(part.value), "json"));
  }
}

/** A heading on one line: every value in it escaped as inline Markdown, the id a code span. */
function heading(view: EntryView): string {
  let title = titleOf(view.role);
  if (view.role === "toolResult") title += `: ${view.toolName ?? "?"}${view.isError === true ? " (error)" : ""}`;
  if (view.model !== undefined) title += ` · ${view.model}`;
  return `## ${markdownInline(title)} · ${markdownInline(String(view.entry.timestamp))} · ${markdownCode(view.entry.id)}`;
}

function body(view: EntryView): string {
  if (view.role === "toolResult") {
    const text = view.parts
      .filter((p) => p.kind !== "image")
      .map(partMarkdown)
      .join("\n\n");
    const images = view.parts.filter((p) => p.kind === "image").map(partMarkdown);
    return [folded(`Output${view.toolCallId === undefined ? "" : ` of ${view.toolCallId}`}`, fenced(text, "text")), ...images].join("\n\n");
  }
  return view.parts.map(partMarkdown).join("\n\n");
}

/**
 * A readable Markdown transcript of one branch (root → `source.leafId`), in pieces: a heading per
 * message with its role, time and entry id; thinking, tool calls and tool output folded in
 * `<details>` with fences no content can close; images as `data:` URLs; fork points named (export
 * another branch with `--branch <entryId>`); artifacts at the end, their text bounded.
 */
export function* markdownChunks(source: TranscriptSource): Generator<string> {
  const { header } = source;
  const title = typeof header.title === "string" && header.title !== "" ? header.title : `Session ${header.id}`;
  yield `# ${markdownInline(title)}\n\n- session: ${markdownCode(header.id)}\n- cwd: ${markdownCode(header.cwd)}\n`;
  yield `- created: ${markdownInline(String(header.timestamp))}\n`;
  yield `- branch: root → ${source.leafId === null ? "(empty)" : markdownCode(source.leafId)}\n\n`;
  const children = new Map<string | null, string[]>();
  for (const e of source.entries) children.set(e.parentId, [...(children.get(e.parentId) ?? []), e.id]);
  for (const entry of branchOf(source.entries, source.leafId)) {
    const view = viewOf(source.rehydrate(entry));
    if (view !== null) yield `${heading(view)}\n\n${body(view)}\n\n`;
    const kids = children.get(entry.id) ?? [];
    if (kids.length > 1) {
      const firsts = kids.map(markdownCode).join(", ");
      yield `> Fork: ${kids.length} branches continue from ${markdownCode(entry.id)} (first entries: ${firsts})\n\n`;
    }
  }
  if (source.artifacts.length > 0) {
    yield "## Artifacts\n\n";
    for (const a of source.artifacts) {
      const label = `${a.uri}${a.name === null ? "" : ` (${a.name})`}: ${a.toolType}, ${a.sizeBytes} bytes`;
      const text =
        a.text === null ? "_(not text: not embedded)_" : `${fenced(a.text, "text")}${a.cut ? "\n\n_(cut: the beginning only)_" : ""}`;
      yield `${folded(label, text)}\n\n`;
    }
  }
}
