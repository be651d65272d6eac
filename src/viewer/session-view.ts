import type { SessionEntry, SessionHeader } from "../format/types.ts";
import { escapeHtml as e } from "../interchange/html-text.ts";
import { textOf, viewOf } from "../interchange/message-parts.ts";
import { branchOf, type SourceArtifact } from "../interchange/transcript-source.ts";
import { bytes, money, sessionHref } from "./page.ts";
import { type EntryContext, entryHtml, type ImageLink } from "./session-html.ts";

/** Entries rendered per page of a branch; the rest load as the reader scrolls ("more"). @default 200 */
export const ENTRY_PAGE = 200;

/** What the session page shows: the session (possibly redacted for sharing) and its neighbours. */
export interface SessionPageData {
  header: SessionHeader;
  entries: SessionEntry[];
  leafId: string | null;
  /** The branch the page shows: `?leaf=`, else the session's leaf. */
  shownLeaf: string | null;
  artifacts: SourceArtifact[];
  size: number;
  models: string[];
  cost: number | null;
  /** Sessions forked from this one. */
  forks: Array<{ id: string; title: string }>;
  imageLink: ImageLink;
}

/** Leaves of the tree (entries no other entry names as parent), in file order. */
export function leavesOf(entries: readonly SessionEntry[]): SessionEntry[] {
  const parents = new Set<string>();
  for (const x of entries) if (x.parentId !== null) parents.add(x.parentId);
  return entries.filter((x) => !parents.has(x.id));
}

function lastUserText(branch: readonly SessionEntry[]): string {
  for (let i = branch.length - 1; i >= 0; i--) {
    const v = viewOf(branch[i]!);
    if (v?.role === "user") return textOf(v.parts).replace(/\s+/g, " ").slice(0, 80);
  }
  return "";
}

/** The sidebar: every branch (leaf) of the tree, the shown one marked, and the session's fork relations. */
function treeHtml(d: SessionPageData, shown: ReadonlySet<string>): string {
  const leaves = leavesOf(d.entries);
  const id = d.header.id;
  const items = leaves
    .map((leaf) => {
      const branch = branchOf(d.entries, leaf.id);
      const current = leaf.id === d.shownLeaf;
      const label = `${branch.length} entries${leaf.id === d.leafId ? " (latest)" : ""}: ${lastUserText(branch) || leaf.id}`;
      return `<li${current ? ' class="current" aria-current="true"' : ""}><a href="${e(`${sessionHref(id)}?leaf=${encodeURIComponent(leaf.id)}`)}">${e(label)}</a></li>`;
    })
    .join("");
  const parent =
    typeof d.header.parentSession === "string" && d.header.parentSession !== ""
      ? `<p>Forked from <a href="${e(sessionHref(d.header.parentSession))}">${e(d.header.parentSession)}</a></p>`
      : "";
  const forks =
    d.forks.length === 0
      ? ""
      : `<h2>Forks</h2><ul>${d.forks.map((f) => `<li><a href="${e(sessionHref(f.id))}">${e(f.title)}</a></li>`).join("")}</ul>`;
  const onPath = d.entries.filter((x) => shown.has(x.id)).length;
  return `<aside class="tree" aria-label="Branches"><h2>Branches (${leaves.length})</h2><p>${onPath} entries on the shown path</p><ol>${items}</ol>${parent}${forks}</aside>`;
}

/** Entries `from`..`from+ENTRY_PAGE` of the shown branch, as HTML (also the fragment "more" and live updates load). */
export function branchPageHtml(d: SessionPageData, from: number, continueCommand = true): { html: string; next: number | null } {
  const branch = branchOf(d.entries, d.shownLeaf);
  const ctx: EntryContext = { sessionId: d.header.id, calls: new Map(), imageLink: d.imageLink, continueCommand };
  // Tool labels of calls before the page, for the results on it.
  const start = Math.max(0, Math.min(from, branch.length));
  for (const x of branch.slice(Math.max(0, start - 50), start)) entryHtml(x, ctx);
  const slice = branch.slice(start, start + ENTRY_PAGE);
  const html = slice.map((x) => entryHtml(x, ctx)).join("");
  return { html, next: start + ENTRY_PAGE < branch.length ? start + ENTRY_PAGE : null };
}

/** The session page's body. */
export function sessionHtml(d: SessionPageData, actions: string): string {
  const h = d.header;
  const title = typeof h.title === "string" && h.title !== "" ? h.title : `Session ${h.id}`;
  const branch = branchOf(d.entries, d.shownLeaf);
  const shown = new Set(branch.map((x) => x.id));
  const messages = d.entries.filter((x) => x.type === "message").length;
  const facts: Array<[string, string]> = [
    ["session", `<code>${e(h.id)}</code>`],
    ["cwd", `<code>${e(String(h.cwd))}</code>`],
    ["created", e(String(h.timestamp))],
    ["messages", String(messages)],
    ["size", e(bytes(d.size))],
    ["models", e(d.models.join(", ") || "—")],
    ["cost", e(money(d.cost))],
  ];
  const { html, next } = branchPageHtml(d, 0);
  const leafParam = d.shownLeaf === null ? "" : `&leaf=${encodeURIComponent(d.shownLeaf)}`;
  const more =
    next === null
      ? ""
      : `<p class="more-entries"><a id="more" data-next="${next}" href="${e(`${sessionHref(h.id)}/entries?from=${next}${leafParam}`)}">more entries</a></p>`;
  const artifacts =
    d.artifacts.length === 0
      ? ""
      : `<section id="artifacts" aria-label="Artifacts"><h2>Artifacts (${d.artifacts.length})</h2><ul>${d.artifacts
          .map(
            (a) =>
              `<li><a href="${e(`${sessionHref(h.id)}/artifact/${encodeURIComponent(a.id)}`)}">${e(a.uri)}</a> ${e(a.name ?? "")} · ${e(a.toolType)} · ${e(bytes(a.sizeBytes))}</li>`,
          )
          .join("")}</ul></section>`;
  return (
    `<div class="session-layout">${treeHtml(d, shown)}<div class="session">` +
    `<header class="session-head"><h1>${e(title)}</h1><dl class="facts">${facts.map(([k, v]) => `<div><dt>${k}</dt><dd>${v}</dd></div>`).join("")}</dl>` +
    `<p>Continue it: <code>transcript-store fork ${e(h.id)}${d.shownLeaf === null ? "" : ` --at ${e(d.shownLeaf)}`}</code></p>${actions}</header>` +
    `<section id="transcript" aria-label="Transcript" data-session="${e(h.id)}" data-leaf="${e(d.shownLeaf ?? "")}" data-follow="${d.shownLeaf === d.leafId ? "1" : "0"}">${html}</section>${more}${artifacts}</div></div>`
  );
}
