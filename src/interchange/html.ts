import { escapeHtml, imageDataUrl, jsonForScript } from "./html-text.ts";
import { HTML_CSP, HTML_SCRIPT, HTML_STYLE } from "./html-assets.ts";
import { type EntryView, type MessagePart, titleOf, viewOf } from "./message-parts.ts";
import { branchOf, type TranscriptSource } from "./transcript-source.ts";

const e = escapeHtml;

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? String(value);
}

/** `artifact://<id>` in escaped text, for an artifact the page embeds, becomes a link to it (a fragment: no request). */
function linkArtifacts(escaped: string, ids: ReadonlySet<string>): string {
  return escaped.replace(/artifact:\/\/(\d+)/g, (uri, id: string) => (ids.has(id) ? `<a href="#artifact-${id}">${uri}</a>` : uri));
}

function partHtml(part: MessagePart, artifactIds: ReadonlySet<string>): string {
  switch (part.kind) {
    case "text":
      return `<div class="text">${linkArtifacts(e(part.text), artifactIds)}</div>`;
    case "thinking":
      return `<details class="thinking"><summary>Thinking</summary>${
        part.redacted ? "<p>(redacted by the provider)</p>" : `<pre>${e(part.text)}</pre>`
      }</details>`;
    case "toolCall": {
      const id = part.id === "" ? "" : ` <code>${e(part.id)}</code>`;
      return `<details class="tool-call"><summary>Tool call: ${e(part.name)}${id}</summary><pre>${e(json(part.arguments))}</pre></details>`;
    }
    case "image": {
      const url = imageDataUrl(part.mimeType, part.data);
      return url === null
        ? `<p class="error">[an image of type ${e(part.mimeType)} that is not base64 image data]</p>`
        : `<img alt="image" src="${e(url)}">`;
    }
    default:
      return `<details class="other"><summary>Other content</summary><pre>${e(json(part.value))}</pre></details>`;
  }
}

function entryHtml(view: EntryView, active: boolean, artifactIds: ReadonlySet<string>): string {
  const partHtmlOf = (p: MessagePart) => partHtml(p, artifactIds);
  const { entry } = view;
  let title = titleOf(view.role);
  if (view.role === "toolResult") title += `: ${view.toolName ?? "?"}`;
  if (view.model !== undefined) title += ` · ${view.model}`;
  const error = view.isError === true ? ' <span class="error">error</span>' : "";
  let inner: string;
  if (view.role === "toolResult") {
    const text = view.parts
      .filter((p) => p.kind !== "image")
      .map(partHtmlOf)
      .join("");
    const images = view.parts
      .filter((p) => p.kind === "image")
      .map(partHtmlOf)
      .join("");
    const of = view.toolCallId === undefined ? "" : ` of <code>${e(view.toolCallId)}</code>`;
    inner = `<details class="tool-result"><summary>Output${of}</summary>${text}</details>${images}`;
  } else inner = view.parts.map(partHtmlOf).join("");
  const attributes = `class="entry role-${e(view.role)}" id="e-${e(entry.id)}" data-entry="${e(entry.id)}"${active ? "" : " hidden"}`;
  return `<article ${attributes}><h2>${e(title)}${error} · <time>${e(entry.timestamp)}</time></h2>${inner}</article>\n`;
}

/**
 * One self-contained HTML page of the session, in pieces: every entry of the tree is in the page,
 * the branch ending at `source.leafId` shown, the others hidden until the reader picks another
 * branch at a fork (a small inline script); tool calls, tool output and thinking folded in
 * `<details>`; images as `data:` URLs; artifacts embedded, their text bounded. All session text
 * is escaped, and a Content-Security-Policy forbids every request (only `data:` images load).
 */
export function* htmlChunks(source: TranscriptSource): Generator<string> {
  const { header } = source;
  const title = typeof header.title === "string" && header.title !== "" ? header.title : `Session ${header.id}`;
  yield '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n';
  yield `<meta http-equiv="Content-Security-Policy" content="${e(HTML_CSP)}">\n`;
  yield `<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">\n`;
  yield `<title>${e(title)}</title><style>${HTML_STYLE}</style></head>\n<body>\n`;
  const facts = [
    ["session", `<code>${e(header.id)}</code>`],
    ["cwd", `<code>${e(header.cwd)}</code>`],
    ["created", e(header.timestamp)],
  ];
  yield `<header><h1>${e(title)}</h1><dl>${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")}</dl></header>\n`;
  yield '<main id="transcript">\n';
  const active = new Set(branchOf(source.entries, source.leafId).map((x) => x.id));
  const artifactIds = new Set(source.artifacts.map((a) => a.id));
  for (const entry of source.entries) {
    const view = viewOf(source.rehydrate(entry));
    const on = active.has(entry.id);
    // An entry with nothing to read still marks its place, so a fork at it has somewhere to show.
    yield view === null
      ? `<div class="mark" id="e-${e(entry.id)}" data-entry="${e(entry.id)}"${on ? "" : " hidden"}></div>\n`
      : entryHtml(view, on, artifactIds);
  }
  yield "</main>\n";
  if (source.artifacts.length > 0) {
    yield '<section id="artifacts"><h2>Artifacts</h2>\n';
    for (const a of source.artifacts) {
      const label = `${a.uri}${a.name === null ? "" : ` (${a.name})`}: ${a.toolType}, ${a.sizeBytes} bytes`;
      const text =
        a.text === null ? "<p>(not text: not embedded)</p>" : `<pre>${e(a.text)}</pre>${a.cut ? "<p>(cut: the beginning only)</p>" : ""}`;
      yield `<details class="artifact" id="artifact-${e(a.id)}"><summary>${e(label)}</summary>${text}</details>\n`;
    }
    yield "</section>\n";
  }
  const tree = { leaf: source.leafId, nodes: source.entries.map((x) => [x.id, x.parentId]) };
  yield `<script type="application/json" id="ts-tree">${jsonForScript(tree)}</script>\n<script>${HTML_SCRIPT}</script>\n</body></html>\n`;
}
