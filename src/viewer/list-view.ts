import { escapeHtml as e } from "../interchange/html-text.ts";
import type { TrashEntry } from "../lifecycle/lifecycle-driver.ts";
import { bytes, money, sessionHref } from "./page.ts";
import type { ViewerSession } from "./viewer-store.ts";

/** The session list's filters, from the query string. */
export interface ListFilters {
  cwd: string;
  since: string;
  until: string;
  model: string;
  archived: "all" | "only" | "hide";
}

export function filtersOf(params: URLSearchParams): ListFilters {
  const archived = params.get("archived");
  return {
    cwd: params.get("cwd") ?? "",
    since: params.get("since") ?? "",
    until: params.get("until") ?? "",
    model: params.get("model") ?? "",
    archived: archived === "only" || archived === "all" ? archived : "hide",
  };
}

/** The sessions the filters keep. */
export function applyFilters(sessions: readonly ViewerSession[], f: ListFilters): ViewerSession[] {
  const since = f.since === "" ? null : Date.parse(f.since);
  const until = f.until === "" ? null : Date.parse(f.until);
  return sessions.filter((s) => {
    if (f.cwd !== "" && !s.cwd.includes(f.cwd)) return false;
    if (f.model !== "" && !(s.usage?.models ?? []).some((m) => m.includes(f.model))) return false;
    if (since !== null && !Number.isNaN(since) && s.modified.getTime() < since) return false;
    if (until !== null && !Number.isNaN(until) && s.modified.getTime() >= until) return false;
    if (f.archived === "hide" && s.archived === true) return false;
    if (f.archived === "only" && s.archived !== true) return false;
    return true;
  });
}

function titleOf(s: ViewerSession): string {
  return s.title ?? s.firstMessage ?? "(no message yet)";
}

/** Rows shown at once; the rest behind "more" (a 10,000-session store is not one table). @default 500 */
export const LIST_PAGE = 500;

/** The sessions page: filters, the search box (as-you-type from the index), the table. */
export function listHtml(all: readonly ViewerSession[], f: ListFilters, offset: number): string {
  const shown = applyFilters(all, f);
  const page = shown.slice(offset, offset + LIST_PAGE);
  const models = [...new Set(all.flatMap((s) => s.usage?.models ?? []))].sort();
  const option = (value: string, label: string, selected: boolean) =>
    `<option value="${e(value)}"${selected ? " selected" : ""}>${e(label)}</option>`;
  const form =
    '<form class="filters" method="get" action="/" role="search" aria-label="Filter sessions">' +
    `<label>cwd <input name="cwd" value="${e(f.cwd)}" placeholder="any"></label>` +
    `<label>since <input name="since" type="date" value="${e(f.since)}"></label>` +
    `<label>until <input name="until" type="date" value="${e(f.until)}"></label>` +
    `<label>model <select name="model">${option("", "any", f.model === "")}` +
    `${models.map((m) => option(m, m, m === f.model)).join("")}</select></label>` +
    `<label>archived <select name="archived">${option("hide", "hide", f.archived === "hide")}` +
    `${option("all", "include", f.archived === "all")}${option("only", "only", f.archived === "only")}</select></label>` +
    '<button type="submit">Filter</button></form>';
  const search =
    '<div class="search"><label for="q">Search every session</label> ' +
    '<input id="q" type="search" autocomplete="off" placeholder="words, &quot;a phrase&quot;, prefix*" aria-controls="hits">' +
    '<ol id="hits" class="hits" aria-live="polite"></ol></div>';
  const rows = page
    .map((s) => {
      const flags = `${s.pinned ? '<span class="flag">pinned</span> ' : ""}${s.archived ? '<span class="flag">archived</span> ' : ""}`;
      return (
        `<tr><td>${flags}<a href="${e(sessionHref(s.id))}">${e(titleOf(s))}</a><div class="id"><code>${e(s.id)}</code></div></td>` +
        `<td><code>${e(s.cwd)}</code></td><td><time datetime="${e(s.modified.toISOString())}">` +
        `${e(s.modified.toISOString().slice(0, 16).replace("T", " "))}</time></td>` +
        `<td class="num">${s.messageCount}</td><td class="num">${e(bytes(s.size))}</td>` +
        (s.usage === null
          ? `<td data-models-of="${e(s.id)}">…</td><td class="num" data-cost-of="${e(s.id)}">…</td></tr>`
          : `<td>${e(s.usage.models.join(", "))}</td><td class="num">${e(s.usage.calls === 0 ? "" : money(s.usage.cost))}</td></tr>`)
      );
    })
    .join("\n");
  const more =
    offset + LIST_PAGE < shown.length
      ? `<p><a href="?${e(new URLSearchParams({ ...f, offset: String(offset + LIST_PAGE) }).toString())}">` +
        `more (${shown.length - offset - LIST_PAGE} left)</a></p>`
      : "";
  return (
    `<h1>Sessions</h1>${search}${form}<p class="count">${shown.length} of ${all.length} sessions</p>` +
    '<table class="sessions"><thead><tr><th scope="col">title</th><th scope="col">cwd</th><th scope="col">last active</th>' +
    '<th scope="col">messages</th><th scope="col">size</th><th scope="col">models</th><th scope="col">cost</th></tr></thead>' +
    `<tbody>${rows}</tbody></table>${more}`
  );
}

/** The trash page: what a restore would bring back, with restore/purge buttons when writes are on. */
export function trashHtml(entries: readonly TrashEntry[], write: (entry: TrashEntry) => string): string {
  const rows = entries
    .map(
      (t) =>
        `<tr><td><code>${e(t.sessionId)}</code></td><td><code>${e(t.cwd)}</code></td><td>${e(t.trashedAt.toISOString())}</td>` +
        `<td class="num">${e(bytes(t.bytes))}</td><td>${write(t)}</td></tr>`,
    )
    .join("\n");
  return (
    `<h1>Trash</h1><p>${entries.length} sessions in the trash; a restore brings each back to its cwd.</p>` +
    '<table><thead><tr><th scope="col">session</th><th scope="col">cwd</th><th scope="col">trashed</th>' +
    '<th scope="col">size</th><th scope="col">actions</th></tr></thead>' +
    `<tbody>${rows}</tbody></table>`
  );
}
