import { usageOfEntries } from "../accounting/entries-usage.ts";
import { entryHtml, type EntryContext } from "./entry-html.ts";
import { escapeHtml, jsonForScript } from "./html-text.ts";
import { HTML_CSP, HTML_SCRIPT, HTML_STYLE } from "./html-assets.ts";
import { branchOf, type TranscriptSource } from "./transcript-source.ts";

const e = escapeHtml;

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
  const usage = usageOfEntries(header, source.entries);
  const messages = source.entries.filter((x) => x.type === "message").length;
  const facts = [
    ["session", `<code>${e(header.id)}</code>`],
    ["cwd", `<code>${e(header.cwd)}</code>`],
    ["created", e(header.timestamp)],
    ["messages", String(messages)],
    ["models", e(usage.models.join(", ") || "—")],
    ["cost", e(usage.cost === null ? "unpriced" : `$${usage.cost.toFixed(4)}`)],
  ];
  yield `<header><h1>${e(title)}</h1><dl>${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")}</dl></header>\n`;
  yield '<main id="transcript">\n';
  const active = new Set(branchOf(source.entries, source.leafId).map((x) => x.id));
  // The viewer's renderer (`serve`), frozen: images embedded as data: URLs, long output behind <details>.
  const ctx: EntryContext = {
    sessionId: header.id,
    calls: new Map(),
    imageLink: () => null,
    continueCommand: false,
    artifactIds: new Set(source.artifacts.map((a) => a.id)),
  };
  // An entry with nothing to read still marks its place, so a fork at it has somewhere to show.
  for (const entry of source.entries) yield entryHtml(source.rehydrate(entry), ctx, !active.has(entry.id));
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
