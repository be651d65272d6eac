import type { SessionEntry } from "../format/types.ts";
import { escapeHtml as e, imageDataUrl } from "./html-text.ts";
import { type EntryView, type MessagePart, titleOf, viewOf } from "./message-parts.ts";
import { markdownToHtml } from "./markdown-html.ts";
import { toolLabel } from "./tool-labels.ts";

/** Lines of a tool's output shown before "show all". @default 30 */
export const OUTPUT_PREVIEW_LINES = 30;
/** Characters of a tool's output shown before "show all" (a few huge lines). @default 4000 */
export const OUTPUT_PREVIEW_CHARS = 4000;

/** How the page links an image part of an entry: a URL to load it lazily (served), or null to embed it (`data:`). */
export type ImageLink = (entryId: string, index: number, mimeType: string) => string | null;

/** What rendering an entry needs besides the entry. */
export interface EntryContext {
  sessionId: string;
  /** Tool call id → what the call did (its label), filled as calls are rendered, for the results that follow. */
  calls: Map<string, string>;
  imageLink: ImageLink;
  /** The `fork --at` line under each entry (off in a frozen export, which may be read elsewhere). @default true */
  continueCommand?: boolean;
  /**
   * Where the whole text of a folded output is served (the page then holds only its first lines);
   * absent (a frozen export), the rest is in the page behind a `<details>`.
   */
  fullLink?: (entryId: string, index: number) => string;
  /** Artifacts the page holds: a mention of `artifact://<id>` in text links to `#artifact-<id>`. @default none */
  artifactIds?: ReadonlySet<string>;
}

/** `artifact://<id>` in the text of rendered HTML (never inside a tag), for an artifact the page holds, becomes a link to it. */
export function linkArtifacts(html: string, ids: ReadonlySet<string> | undefined): string {
  if (ids === undefined || ids.size === 0) return html;
  return html.replace(
    /(^|>)([^<]*)/g,
    (_, open: string, text: string) =>
      open + text.replace(/artifact:\/\/(\d+)/g, (uri, id: string) => (ids.has(id) ? `<a href="#artifact-${id}">${uri}</a>` : uri)),
  );
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? String(value);
}

/** The first lines of a long text (at most `OUTPUT_PREVIEW_LINES` lines and `OUTPUT_PREVIEW_CHARS` characters). */
export function previewOf(text: string): string {
  // end: where the OUTPUT_PREVIEW_LINES-th line break is (the text's end when it has fewer lines)
  let end = -1;
  for (let line = 0; line < OUTPUT_PREVIEW_LINES; line++) {
    const next = text.indexOf("\n", end + 1);
    if (next === -1) {
      end = text.length;
      break;
    }
    end = next;
  }
  const head = text.slice(0, end);
  return head.length > OUTPUT_PREVIEW_CHARS ? head.slice(0, OUTPUT_PREVIEW_CHARS) : head;
}

/** Long text folded: the first lines, then "show all" (a link to the whole text, or the rest behind a `<details>`). */
export function foldedPre(text: string, cls: string, full?: string): string {
  const head = previewOf(text);
  if (head.length === text.length) return `<pre class="${cls}">${e(text)}</pre>`;
  let lines = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++;
  const more = `show all (${lines} lines, ${text.length} characters)`;
  if (full !== undefined)
    return `<pre class="${cls}">${e(head)}</pre><p class="more"><a class="show-all" href="${e(full)}">${e(more)}</a></p>`;
  const rest = text.slice(head.length);
  return (
    `<pre class="${cls}">${e(head)}</pre>` +
    `<details class="more"><summary>${e(more)}</summary><pre class="${cls}">${e(rest)}</pre></details>`
  );
}

function partHtml(part: MessagePart, view: EntryView, index: number, ctx: EntryContext): string {
  switch (part.kind) {
    case "text":
      return view.role === "toolResult" || view.role === "bashExecution"
        ? foldedPre(part.text, "output", ctx.fullLink?.(view.entry.id, index))
        : `<div class="md">${linkArtifacts(markdownToHtml(part.text), ctx.artifactIds)}</div>`;
    case "thinking":
      return `<details class="thinking"><summary>Thinking</summary>${
        part.redacted ? "<p>(redacted by the provider)</p>" : `<div class="md">${markdownToHtml(part.text)}</div>`
      }</details>`;
    case "toolCall": {
      const label = toolLabel(part.name, part.arguments);
      if (part.id !== "") ctx.calls.set(part.id, label);
      return (
        `<details class="tool-call"><summary><span class="tool-name">${e(part.name)}</span> <code>${e(label)}</code></summary>` +
        `<pre class="args">${e(json(part.arguments))}</pre></details>`
      );
    }
    case "image": {
      const link = /^image\/[a-z0-9.+-]+$/i.test(part.mimeType) ? ctx.imageLink(view.entry.id, index, part.mimeType) : null;
      if (link !== null) return `<img alt="image ${index + 1} of the entry" loading="lazy" src="${e(link)}">`;
      const url = imageDataUrl(part.mimeType, part.data);
      return url === null
        ? `<p class="error">[an image of type ${e(part.mimeType)} that is not base64 image data]</p>`
        : `<img alt="image ${index + 1} of the entry" loading="lazy" src="${e(url)}">`;
    }
    default:
      return `<details class="other"><summary>Other content</summary><pre>${e(json(part.value))}</pre></details>`;
  }
}

/**
 * One entry as an `<article>` (id `e-<entry id>`), or a bare mark for an entry with nothing to read;
 * `hidden` (a static page's other branches) until its branch is picked.
 */
export function entryHtml(entry: SessionEntry, ctx: EntryContext, hidden = false): string {
  const view = viewOf(entry);
  const id = e(entry.id);
  const hide = hidden ? " hidden" : "";
  if (view === null) return `<div class="mark" id="e-${id}" data-entry="${id}"${hide}></div>\n`;
  let title = titleOf(view.role);
  if (view.role === "toolResult") {
    const label = view.toolCallId === undefined ? undefined : ctx.calls.get(view.toolCallId);
    title = `↳ ${label ?? view.toolName ?? "tool result"}`;
  }
  const model = view.model === undefined ? "" : ` <span class="model">${e(view.model)}</span>`;
  const error = view.isError === true ? ' <span class="error">error</span>' : "";
  const time = typeof entry.timestamp === "string" ? `<time datetime="${e(entry.timestamp)}">${e(entry.timestamp)}</time>` : "";
  const body = view.parts.map((p, i) => partHtml(p, view, i, ctx)).join("");
  const cont =
    ctx.continueCommand === false
      ? ""
      : `<code class="continue" title="continue from here">transcript-store fork ${e(ctx.sessionId)} --at ${id}</code>`;
  const link = `<a class="anchor" href="#${id}" aria-label="link to this entry">#</a>`;
  const cls = `entry role-${e(view.role.replace(/[^\w-]/g, "_"))}`;
  return (
    `<article class="${cls}" id="e-${id}" data-entry="${id}"${hide}><header><h3>${e(title)}</h3>${model}${error} ${time} ${link}</header>` +
    `${body}${cont}</article>\n`
  );
}
