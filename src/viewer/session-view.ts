import type { SessionEntry } from "../format/types.ts";
import { escapeHtml as e } from "../interchange/html-text.ts";
import { textOf, viewOf } from "../interchange/message-parts.ts";
import { bytes, money, sessionHref } from "./page.ts";
import type { SessionView } from "./session-data.ts";
import { type EntryContext, entryHtml, shellWord } from "../interchange/entry-html.ts";
import { pathTo, type TreeNode } from "./session-skeleton.ts";

/** Entries rendered per page of a branch; the rest load as the reader scrolls ("more"). @default 200 */
export const ENTRY_PAGE = 200;
/** Branches listed in the sidebar at most (each labelled by its last user message). @default 100 */
export const MAX_LISTED_BRANCHES = 100;

/** Leaves of the tree (nodes no other node names as parent), in file order. */
export function leavesOf(nodes: readonly TreeNode[]): TreeNode[] {
  const parents = new Set<string>();
  for (const x of nodes) if (x.parentId !== null) parents.add(x.parentId);
  return nodes.filter((x) => !parents.has(x.id));
}

/** The shown branch: root → `leaf` (the session's leaf when `leaf` is unknown). */
export function shownBranch(v: SessionView, leaf: string | null): { leaf: string | null; branch: TreeNode[] } {
  const shown = leaf !== null && v.byId.has(leaf) ? leaf : v.leafId;
  return { leaf: shown, branch: pathTo(v.nodes, v.byId, shown) };
}

/** A branch's label: the last user message among its last 40 entries, else the leaf id. */
function branchLabel(v: SessionView, branch: readonly TreeNode[]): string {
  const tail = branch.slice(-40);
  const entries = v.entries(tail.map((n) => n.id));
  for (let i = tail.length - 1; i >= 0; i--) {
    const entry = entries.get(tail[i]!.id);
    const view = entry === undefined ? null : viewOf(entry);
    if (view?.role === "user") return textOf(view.parts).replace(/\s+/g, " ").slice(0, 80);
  }
  return branch[branch.length - 1]?.id ?? "";
}

/** The sidebar: the tree's branches (leaves), the shown one marked, and the session's fork relations. */
function treeHtml(
  v: SessionView,
  shownLeaf: string | null,
  branchLength: number,
  forks: ReadonlyArray<{ id: string; title: string }>,
): string {
  const leaves = leavesOf(v.nodes);
  const id = v.info.id;
  const items = leaves
    .slice(0, MAX_LISTED_BRANCHES)
    .map((leaf) => {
      const branch = pathTo(v.nodes, v.byId, leaf.id);
      const current = leaf.id === shownLeaf;
      const label = `${branch.length} entries${leaf.id === v.leafId ? " (latest)" : ""}: ${branchLabel(v, branch)}`;
      const href = `${sessionHref(id)}?leaf=${encodeURIComponent(leaf.id)}`;
      return `<li${current ? ' class="current" aria-current="true"' : ""}><a href="${e(href)}">${e(label)}</a></li>`;
    })
    .join("");
  const more = leaves.length > MAX_LISTED_BRANCHES ? `<p>and ${leaves.length - MAX_LISTED_BRANCHES} more branches</p>` : "";
  const parentSession = v.header.parentSession;
  const parent =
    typeof parentSession === "string" && parentSession !== ""
      ? `<p>Forked from <a href="${e(sessionHref(parentSession))}">${e(parentSession)}</a></p>`
      : "";
  const forkList =
    forks.length === 0
      ? ""
      : `<h2>Forks</h2><ul>${forks.map((f) => `<li><a href="${e(sessionHref(f.id))}">${e(f.title)}</a></li>`).join("")}</ul>`;
  return (
    `<aside class="tree" aria-label="Branches"><h2>Branches (${leaves.length})</h2><p>${branchLength} entries on the shown path</p>` +
    `<ol>${items}</ol>${more}${parent}${forkList}</aside>`
  );
}

/** Entries `from`..`from+ENTRY_PAGE` of a branch as HTML (the first page, "more", and live updates). */
export function branchPageHtml(
  v: SessionView,
  branch: readonly TreeNode[],
  from: number,
  continueCommand = true,
): { html: string; next: number | null } {
  const ctx: EntryContext = {
    sessionId: v.info.id,
    calls: new Map(),
    imageLink: v.imageLink,
    continueCommand,
    fullLink: (entryId, index) => `${sessionHref(v.info.id)}/text/${encodeURIComponent(entryId)}/${index}`,
  };
  const start = Math.max(0, Math.min(from, branch.length));
  const before = branch.slice(Math.max(0, start - 50), start);
  const slice = branch.slice(start, start + ENTRY_PAGE);
  const entries = v.entries([...before, ...slice].map((n) => n.id));
  // The calls just before the page name the tool results at its top.
  for (const n of before) {
    const entry = entries.get(n.id);
    if (entry !== undefined) entryHtml(entry, ctx);
  }
  const html = slice
    .map((n) => entries.get(n.id))
    .filter((x): x is SessionEntry => x !== undefined)
    .map((x) => entryHtml(x, ctx))
    .join("");
  return { html, next: start + ENTRY_PAGE < branch.length ? start + ENTRY_PAGE : null };
}

/** The session page's body; `forks` are the sessions forked from it. */
export function sessionHtml(
  v: SessionView,
  leaf: string | null,
  forks: ReadonlyArray<{ id: string; title: string }>,
  actions: string,
): string {
  const h = v.header;
  const title = pageTitle(v);
  const { leaf: shownLeaf, branch } = shownBranch(v, leaf);
  const stats = `${sessionHref(v.info.id)}/stats`;
  const facts: Array<[string, string]> = [
    ["session", `<code>${e(h.id)}</code>`],
    ["cwd", `<code>${e(String(h.cwd))}</code>`],
    ["created", e(String(h.timestamp))],
    ["messages", String(v.info.messageCount)],
    ["size", e(bytes(v.info.size))],
    // Read from every entry: filled in after the first screen (a large session is not parsed whole for it).
    ["models", `<span data-stat="models" data-src="${e(stats)}">…</span>`],
    ["cost", '<span data-stat="cost">…</span>'],
  ];
  const { html, next } = branchPageHtml(v, branch, 0);
  const leafParam = shownLeaf === null ? "" : `&leaf=${encodeURIComponent(shownLeaf)}`;
  const more =
    next === null
      ? ""
      : `<p class="more-entries"><a id="more" href="${e(`${sessionHref(h.id)}/entries?from=${next}${leafParam}`)}">more entries</a></p>`;
  const artifacts = v.artifacts();
  const artifactList =
    artifacts.length === 0
      ? ""
      : `<section id="artifacts" aria-label="Artifacts"><h2>Artifacts (${artifacts.length})</h2><ul>${artifacts
          .map(
            (a) =>
              `<li><a href="${e(`${sessionHref(h.id)}/artifact/${encodeURIComponent(a.id)}`)}">${e(a.uri)}</a> ` +
              `${e(a.name ?? "")} · ${e(a.toolType)} · ${e(bytes(a.sizeBytes))}</li>`,
          )
          .join("")}</ul></section>`;
  const follow = shownLeaf === v.leafId ? "1" : "0";
  const command = `transcript-store fork ${shellWord(h.id)}${shownLeaf === null ? "" : ` --at ${shellWord(shownLeaf)}`}`;
  return (
    `<div class="session-layout">${treeHtml(v, shownLeaf, branch.length, forks)}<div class="session">` +
    `<header class="session-head"><h1>${e(title)}</h1>` +
    `<dl class="facts">${facts.map(([k, x]) => `<div><dt>${k}</dt><dd>${x}</dd></div>`).join("")}</dl>` +
    `<p>Continue it: <code>${e(command)}</code></p>` +
    `${actions}</header>` +
    `<section id="transcript" aria-label="Transcript" data-follow="${follow}">${html}</section>${more}${artifactList}</div></div>`
  );
}

/** A session's title as the list shows it: its name, else its first user message, else its id. */
export function pageTitle(v: SessionView): string {
  const h = v.header;
  if (typeof h.title === "string" && h.title !== "") return h.title;
  const listed = v.info.title ?? v.info.firstMessage;
  return listed !== null && listed !== "" ? v.share(listed) : `Session ${h.id}`;
}

/** The stats the page fills in after its first screen: models and cost, as `usage` counts them. */
export function statsOf(v: SessionView): { models: string; cost: string } {
  const u = v.usage();
  return { models: u.models.join(", ") || "—", cost: money(u.cost) };
}
