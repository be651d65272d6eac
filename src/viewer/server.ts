import { watch, type FSWatcher } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { TranscriptStoreError } from "../errors.ts";
import { HIGHLIGHT_END, HIGHLIGHT_START } from "../search/snippet.ts";
import { escapeHtml as e } from "../interchange/html-text.ts";
import { viewOf } from "../interchange/message-parts.ts";
import { redactForSharing } from "../session/redact-for-sharing.ts";
import { resolveSessionManagerOptions } from "../session/session-options.ts";
import { sharingRedactorOf } from "../storage/sharing-key.ts";
import type { SessionInfo } from "../session/session-info.ts";
import { VIEWER_CSS, VIEWER_JS } from "./assets.ts";
import { COMPARE_ROWS, compareFormHtml, compareHtml } from "./compare-view.ts";
import { admit, csrfOk, csrfTokenFor, newToken, securityHeaders, tokenCookie } from "./guard.ts";
import { filtersOf, listHtml, trashHtml } from "./list-view.ts";
import { money, pageHtml, sessionHref } from "./page.ts";
import { openSessionView, type SessionView } from "./session-data.ts";
import { branchPageHtml, pageTitle, sessionHtml, shownBranch, statsOf } from "./session-view.ts";
import { sharedHits } from "./sharing-search.ts";
import { usageHtml } from "./usage-view.ts";
import { type SessionCost, ViewerStore, type ViewerStoreOptions, withCosts } from "./viewer-store.ts";
import {
  actionFormHtml,
  runAction,
  runTrashAction,
  TRASH_ACTIONS,
  type TrashAction,
  type ViewerAction,
  VIEWER_ACTIONS,
  type ViewerHooks,
} from "./actions.ts";
import { exportSession } from "../interchange/export-session.ts";

export interface ViewerOptions extends ViewerStoreOptions {
  /** Address to bind. @default "127.0.0.1" */
  host?: string;
  /** Port; 0 picks a free one. @default 0 */
  port?: number;
  /** The token every request must carry; a random one when absent. */
  token?: string;
  /** Show the sharing view (secrets redacted, as `export` shares). @default false */
  sharingView?: boolean;
  /** Allow write actions (pin, archive, rm/restore, fork, redact), each behind a confirmation. @default false */
  write?: boolean;
  /** Actions the host lends (the CLI's `redact`). */
  hooks?: ViewerHooks;
}

/** A running viewer: its URL (with the token) and how to stop it. */
export interface RunningViewer {
  url: string;
  port: number;
  token: string;
  server: Server;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A time as ISO text; null for an invalid one (a header's time a transcript wrote as no date). */
function isoOf(d: Date): string | null {
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** A path segment decoded; a malformed percent-escape is the client's error (400), not the server's. */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, "malformed percent-escape in the path");
  }
}

/** Splits a snippet at the index's highlight marks into text pieces (the page sets them as text, never as HTML). */
export function snippetParts(snippet: string): Array<{ text: string; hit: boolean }> {
  const parts: Array<{ text: string; hit: boolean }> = [];
  let rest = snippet;
  while (rest.length > 0) {
    const start = rest.indexOf(HIGHLIGHT_START);
    if (start === -1) break;
    const end = rest.indexOf(HIGHLIGHT_END, start + 1);
    if (end === -1) break;
    if (start > 0) parts.push({ text: rest.slice(0, start), hit: false });
    parts.push({ text: rest.slice(start + 1, end), hit: true });
    rest = rest.slice(end + 1);
  }
  if (rest.length > 0) parts.push({ text: rest, hit: false });
  return parts;
}

/**
 * `transcript-store serve`: a local web viewer over the store (file tree or database). Binds
 * 127.0.0.1 unless told otherwise; every request needs the token of the printed URL (then a
 * `SameSite=Strict` cookie) and a `Host` naming the server; every page carries a strict CSP; write
 * actions exist only with `write`, each behind a confirmation form with a per-session CSRF token.
 */
export async function startViewer(options: ViewerOptions = {}): Promise<RunningViewer> {
  const host = options.host ?? "127.0.0.1";
  const token = options.token ?? newToken();
  const { host: _h, port: _p, token: _t, sharingView: _s, write: _w, hooks: _k, ...storeOptions } = options;
  const store = new ViewerStore(storeOptions);
  const redact = options.sharingView === true;
  const write = options.write === true;
  const watchers = new Set<() => void>();
  // The ledger's costs: read once in the background, then again at most every 30 s (the old ones are
  // shown meanwhile); a list page never waits for them unless it filters by model.
  let costs: { at: number; value: Map<string, SessionCost> | null; pending: Promise<Map<string, SessionCost>> | null } = {
    at: 0,
    value: null,
    pending: null,
  };
  const loadCosts = (): Promise<Map<string, SessionCost>> => {
    if (costs.pending === null && (costs.value === null || Date.now() - costs.at > 30_000)) {
      const pending = store.costs();
      costs.pending = pending;
      pending.then(
        (value) => {
          costs = { at: Date.now(), value, pending: null };
        },
        () => {
          costs.pending = null;
        },
      );
    }
    return costs.value !== null ? Promise.resolve(costs.value) : costs.pending!;
  };
  const costsIfReady = (): Map<string, SessionCost> | null => {
    void loadCosts().catch(() => {});
    return costs.value;
  };
  let plain: { at: number; list: Promise<SessionInfo[]> } | null = null;
  // The listing alone (no usage ledger): what a session page needs of the others (its forks).
  const listing = (): Promise<SessionInfo[]> => {
    if (plain === null || Date.now() - plain.at > 1500) {
      const current = { at: Date.now(), list: store.listing() };
      current.list.catch(() => {
        if (plain === current) plain = null;
      });
      plain = current;
    }
    return plain.list;
  };
  const findSession = async (id: string): Promise<SessionInfo> => {
    const all = await listing();
    const found = all.find((s) => s.id === id);
    if (found !== undefined) return found;
    try {
      return await store.resolve(id);
    } catch (err) {
      if (err instanceof TranscriptStoreError) throw new HttpError(404, `no session ${id}`);
      throw err;
    }
  };
  // The sharing view's redactor for text the pages take from the listing (titles, first messages).
  const sharing = redact ? await sharingRedactorOf(resolveSessionManagerOptions(storeOptions).store, storeOptions.root, true) : null;
  const shareText = (text: string): string => (sharing === null ? text : redactForSharing(text, sharing, new Map()));
  const shareInfo = <T extends SessionInfo>(x: T): T =>
    sharing === null
      ? x
      : {
          ...x,
          title: x.title === null ? null : shareText(x.title),
          firstMessage: x.firstMessage === null ? null : shareText(x.firstMessage),
          // a cwd (and the file path named after it) can hold a secret too
          cwd: shareText(x.cwd),
          path: shareText(x.path),
          parentSession: x.parentSession === null ? null : shareText(x.parentSession),
        };
  const page = (title: string, body: string, live?: string) => pageHtml(title, body, { redacted: redact, write, live });

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      const message =
        err instanceof HttpError ? err.message : err instanceof TranscriptStoreError ? `${err.code}: ${err.message}` : "internal error";
      if (!res.headersSent) {
        res.writeHead(status, { "Content-Type": "text/html; charset=utf-8" });
        res.end(page("Error", `<h1>${status}</h1><p>${e(shareText(message))}</p>`));
      }
      // Part of the answer is sent (an export streaming): cut the connection, so the browser reports a
      // failed download instead of keeping a truncated file that looks whole.
      else res.destroy();
    });
  });

  const allowedHosts = new Set<string>();
  let port = 0;
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://viewer.invalid");
    const cookie = tokenCookie(port);
    const admission = admit(req, url, token, allowedHosts, cookie);
    if (!admission.ok) {
      securityHeaders(res, null, cookie);
      res.writeHead(admission.status, { "Content-Type": "text/plain; charset=utf-8" });
      res.end(`${admission.reason}\n`);
      return;
    }
    securityHeaders(res, admission.setCookie ? token : null, cookie);
    if (admission.setCookie) {
      // The token leaves the address bar (and so the history) at once; the path keeps one leading
      // slash (`//host` would be another server's address).
      url.searchParams.delete("token");
      res.writeHead(303, { Location: `/${url.pathname.replace(/^\/+/, "")}${url.search}` });
      res.end();
      return;
    }
    const path = url.pathname;
    if (req.method === "POST") return post(req, res, url);
    if (req.method !== "GET" && req.method !== "HEAD") throw new HttpError(405, "method not allowed");
    if (path === "/static/viewer.css") return send(res, 200, "text/css; charset=utf-8", VIEWER_CSS);
    if (path === "/static/viewer.js") return send(res, 200, "text/javascript; charset=utf-8", VIEWER_JS);
    if (path === "/") {
      const offset = Math.max(0, Number(url.searchParams.get("offset")) || 0);
      const filters = filtersOf(url.searchParams);
      const known = filters.model === "" ? costsIfReady() : await loadCosts();
      return html(res, page("Sessions", listHtml(withCosts(await listing(), known).map(shareInfo), filters, offset)));
    }
    if (path === "/api/sessions") {
      const all = withCosts(await listing(), await loadCosts()).map(shareInfo);
      return json(
        res,
        all.map((s) => ({ ...s, created: isoOf(s.created), modified: isoOf(s.modified) })),
      );
    }
    if (path === "/api/costs") {
      const all = await loadCosts();
      return json(
        res,
        Object.fromEntries([...all].map(([id, c]) => [id, { models: c.models.join(", "), cost: c.calls === 0 ? "" : money(c.cost) }])),
      );
    }
    if (path === "/api/search") return searchApi(res, url);
    if (path === "/usage") return usagePage(res);
    if (path === "/trash") return trashPage(res);
    if (path === "/trash/confirm") return confirmTrash(res, url);
    if (path === "/compare") return comparePage(res, url);
    const m = /^\/s\/([^/]+)(?:\/(entries|events|image|text|artifact|confirm|stats|export\.html)(?:\/(.*))?)?$/.exec(path);
    if (m !== null) {
      const id = decoded(m[1]!);
      const info = await findSession(id);
      const what = m[2];
      if (what === undefined) return sessionPage(res, info, url);
      if (what === "entries") return entriesFragment(res, info, url);
      if (what === "events") return events(req, res, info, url);
      if (what === "image") return image(res, info, m[3] ?? "");
      if (what === "artifact") return artifact(res, info, decoded(m[3] ?? ""));
      if (what === "confirm") return confirm(res, info, url);
      if (what === "export.html") return exportHtml(res, info);
      if (what === "stats") return stats(res, info);
      if (what === "text") return partText(res, info, m[3] ?? "");
    }
    throw new HttpError(404, "not found");
  }

  function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
    res.writeHead(status, { "Content-Type": type });
    res.end(body);
  }
  function html(res: ServerResponse, body: string): void {
    send(res, 200, "text/html; charset=utf-8", body);
  }
  function json(res: ServerResponse, value: unknown): void {
    send(res, 200, "application/json; charset=utf-8", JSON.stringify(value));
  }

  async function searchApi(res: ServerResponse, url: URL): Promise<void> {
    let q = (url.searchParams.get("q") ?? "").trim();
    if (q === "") return json(res, { hits: [] });
    // One character matches nearly everything: the box waits for a second.
    if ([...q.replace(/[*"]/g, "")].length < 2) return json(res, { hits: [], hint: "type at least two characters" });
    // As you type, the last word is a prefix once it has three letters ("pars" finds "parser").
    if (url.searchParams.get("prefix") === "1" && /(^|\s)[\p{L}\p{N}_]{3,}$/u.test(q)) q = `${q}*`;
    try {
      const [found, all] = await Promise.all([store.search(q, 30), listing()]);
      // The sharing view keeps a hit only when its entry, redacted, still matches (no oracle for a secret).
      const hits = redact
        ? await sharedHits(found, q, async (sessionId, ids) =>
            withView(await findSession(sessionId), (v) => new Map([...v.entries(ids)].map(([id, x]) => [id, JSON.stringify(x)]))),
          )
        : found;
      const titles = new Map(all.map((s) => [s.id, s.title ?? s.firstMessage ?? ""]));
      return json(res, {
        hits: hits.map((h) => ({
          sessionId: h.sessionId,
          entryId: h.entryId,
          role: h.role,
          timestamp: h.timestamp,
          cwd: shareText(h.cwd),
          title: shareText(titles.get(h.sessionId) ?? ""),
          // The sharing view shows no snippet: a snippet's edge can cut a secret the redactor would no longer see whole.
          snippet: redact ? [] : snippetParts(h.snippet),
        })),
      });
    } catch (err) {
      if (err instanceof TranscriptStoreError) return json(res, { hits: [], error: `${err.code}: ${err.message}` });
      throw err;
    }
  }

  /** Runs `use` on the session's view and closes it after. */
  async function withView<T>(info: SessionInfo, use: (v: SessionView) => T | Promise<T>): Promise<T> {
    const v = await openSessionView(store, info, { redact });
    try {
      return await use(v);
    } finally {
      await v.close();
    }
  }

  async function sessionPage(res: ServerResponse, info: SessionInfo, url: URL): Promise<void> {
    const all = await listing();
    const body = await withView(info, (v) => {
      const forks = all
        .filter((s) => s.parentSession !== null && (s.parentSession === info.id || s.parentSession === info.path))
        .map((s) => ({ id: s.id, title: v.share(s.title ?? s.firstMessage ?? s.id) }));
      const leaf = url.searchParams.get("leaf");
      const { leaf: shownLeaf } = shownBranch(v, leaf);
      const latest = shownBranch(v, null).branch;
      const last = latest[latest.length - 1]?.id;
      const live = `${sessionHref(info.id)}/events?from=${latest.length}${last === undefined ? "" : `&last=${encodeURIComponent(last)}`}`;
      const actions = write ? actionFormHtml(info.id, shownLeaf) : "";
      const title = pageTitle(v);
      return page(title, sessionHtml(v, leaf, forks, actions), live);
    });
    return html(res, body);
  }

  async function entriesFragment(res: ServerResponse, info: SessionInfo, url: URL): Promise<void> {
    const from = Math.max(0, Number(url.searchParams.get("from")) || 0);
    const { html: body, next } = await withView(info, (v) => branchPageHtml(v, shownBranch(v, url.searchParams.get("leaf")).branch, from));
    if (next !== null) res.setHeader("X-Next", String(next));
    return send(res, 200, "text/html; charset=utf-8", body);
  }

  async function stats(res: ServerResponse, info: SessionInfo): Promise<void> {
    return json(res, await withView(info, statsOf));
  }

  /**
   * Server-sent events of a session being written: the session file's change notifications (a
   * database session, which has no file, is re-read once a second); each change sends the entries
   * of the latest branch past what the page has.
   */
  async function events(req: IncomingMessage, res: ServerResponse, info: SessionInfo, url: URL): Promise<void> {
    let sent = Math.max(0, Number(url.searchParams.get("from")) || 0);
    // The last entry the page shows: when the latest branch no longer passes through it (the writer
    // went back and continued elsewhere), the page is told to reload instead of being sent that tail.
    let last = url.searchParams.get("last");
    res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", Connection: "keep-alive" });
    res.write(": live\n\n");
    let busy = false;
    let again = false;
    const push = async (): Promise<void> => {
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      try {
        do {
          again = false;
          await withView(info, (v) => {
            const { branch } = shownBranch(v, null);
            if (last !== null && sent > 0 && branch[sent - 1]?.id !== last) {
              res.write("event: reload\ndata: {}\n\n");
              last = null;
              sent = Number.POSITIVE_INFINITY;
              return;
            }
            if (branch.length <= sent) return;
            const { html: body } = branchPageHtml(v, branch, sent);
            sent = branch.length;
            last = branch[sent - 1]!.id;
            res.write(`event: entries\ndata: ${JSON.stringify({ html: body, count: sent })}\n\n`);
          });
        } while (again);
      } catch {
        // A session mid-write may not open for a moment; the next change tries again.
      } finally {
        busy = false;
      }
    };
    let watcher: FSWatcher | null = null;
    let timer: NodeJS.Timeout | null = null;
    try {
      watcher = watch(info.path, { persistent: false }, () => void push());
    } catch {
      timer = setInterval(() => void push(), 1000);
    }
    const heartbeat = setInterval(() => res.write(": ping\n\n"), 15_000);
    const stop = () => {
      watcher?.close();
      if (timer !== null) clearInterval(timer);
      clearInterval(heartbeat);
      watchers.delete(stop);
      res.end();
    };
    watchers.add(stop);
    req.on("close", stop);
    void push();
  }

  async function image(res: ServerResponse, info: SessionInfo, rest: string): Promise<void> {
    const [entryId, index] = rest.split("/");
    const found = await withView(info, (v) => v.image(decoded(entryId ?? ""), Number(index)));
    if (found === null) throw new HttpError(404, "no such image");
    // An SVG opened on its own is a document: the sandbox keeps any script in it from running.
    res.setHeader("Content-Security-Policy", "sandbox; default-src 'none'; style-src 'unsafe-inline'");
    res.setHeader("Cache-Control", "private, max-age=3600");
    return send(res, 200, found.type, found.bytes);
  }

  /** The whole text of a folded output ("show all"), as plain text. */
  async function partText(res: ServerResponse, info: SessionInfo, rest: string): Promise<void> {
    const [entryId, index] = rest.split("/");
    const id = decoded(entryId ?? "");
    const text = await withView(info, (v) => {
      const entry = v.entries([id]).get(id);
      const part = entry === undefined ? undefined : viewOf(entry)?.parts[Number(index)];
      return part?.kind === "text" ? part.text : null;
    });
    if (text === null) throw new HttpError(404, "no such text");
    res.setHeader("Content-Security-Policy", "sandbox; default-src 'none'");
    return send(res, 200, "text/plain; charset=utf-8", text);
  }

  async function artifact(res: ServerResponse, info: SessionInfo, artifactId: string): Promise<void> {
    const text = await withView(info, (v) => (v.artifacts().some((a) => a.id === artifactId) ? v.artifactText(artifactId) : undefined));
    if (text === undefined) throw new HttpError(404, "no such artifact");
    if (text === null) throw new HttpError(404, "the artifact is not text");
    res.setHeader("Content-Security-Policy", "sandbox; default-src 'none'");
    return send(res, 200, "text/plain; charset=utf-8", text);
  }

  async function usagePage(res: ServerResponse): Promise<void> {
    const [day, model, cwd, session, space] = await Promise.all([
      store.usage("day"),
      store.usage("model"),
      store.usage("cwd"),
      store.usage("session"),
      store.space("cwd"),
    ]);
    return html(
      res,
      page(
        "Usage and space",
        usageHtml({
          byDay: day.groups,
          byModel: model.groups,
          byCwd: cwd.groups.map((g) => ({ ...g, key: shareText(g.key) })),
          bySession: session.groups,
          total: day.total,
          spaceByCwd: space.rows.map((r) => ({ ...r, cwd: shareText(r.cwd) })),
          spaceTotals: space.totals,
        }),
      ),
    );
  }

  async function trashPage(res: ServerResponse): Promise<void> {
    const entries = await store.trash();
    const buttons = (t: { trashId: string }) =>
      write
        ? TRASH_ACTIONS.map((a) => `<a href="/trash/confirm?action=${a}&amp;id=${e(encodeURIComponent(t.trashId))}">${a}…</a>`).join(" · ")
        : "";
    const shown = entries.map((t) => ({ ...t, cwd: shareText(t.cwd), from: shareText(t.from) }));
    return html(res, page("Trash", trashHtml(shown, buttons)));
  }

  async function comparePage(res: ServerResponse, url: URL): Promise<void> {
    const a = url.searchParams.get("a") ?? "";
    const b = url.searchParams.get("b") ?? "";
    if (a === "" || b === "") return html(res, page("Compare", compareFormHtml(a, b)));
    const [left, right] = [await findSession(a), await findSession(b)];
    const body = await withView(left, (l) =>
      withView(right, (r) => {
        const side = (v: SessionView, leaf: string | null) => {
          const shown = shownBranch(v, leaf);
          const nodes = shown.branch.slice(0, COMPARE_ROWS);
          const entries = v.entries(nodes.map((n) => n.id));
          return {
            label: `${v.info.id}${shown.leaf === null ? "" : ` @ ${shown.leaf}`}`,
            branch: nodes.map((n) => entries.get(n.id)).filter((x) => x !== undefined),
            ctx: { sessionId: v.info.id, calls: new Map<string, string>(), imageLink: v.imageLink, continueCommand: false },
          };
        };
        return compareHtml(side(l, url.searchParams.get("aleaf") || null), side(r, url.searchParams.get("bleaf") || null));
      }),
    );
    return html(res, page("Compare", compareFormHtml(a, b) + body));
  }

  function confirmForm(title: string, what: string, target: string, fields: Record<string, string>, back: string): string {
    const hidden = Object.entries(fields)
      .map(([k, v]) => `<input type="hidden" name="${e(k)}" value="${e(v)}">`)
      .join("");
    return (
      `<h1>Confirm: ${e(title)}</h1><p>${what}</p><form method="post" action="${e(target)}">${hidden}` +
      `<button type="submit">${e(title)}</button> <a href="${e(back)}">cancel</a></form>`
    );
  }

  async function confirm(res: ServerResponse, info: SessionInfo, url: URL): Promise<void> {
    if (!write) throw new HttpError(403, "write actions are off: start the server with --write");
    const action = url.searchParams.get("action") as ViewerAction | null;
    if (action === null || !VIEWER_ACTIONS.includes(action)) throw new HttpError(400, "unknown action");
    // Only a fork starts at an entry: any other action's page names the whole session, as it acts on it.
    const at = action === "fork" ? url.searchParams.get("at") : null;
    const what = `Session <code>${e(info.id)}</code>${at === null ? "" : ` at entry <code>${e(at)}</code>`}.`;
    const fields: Record<string, string> = { action, csrf: csrfTokenFor(token, info.id), ...(at === null ? {} : { at }) };
    return html(res, page(`Confirm ${action}`, confirmForm(action, what, `${sessionHref(info.id)}/action`, fields, sessionHref(info.id))));
  }

  async function confirmTrash(res: ServerResponse, url: URL): Promise<void> {
    if (!write) throw new HttpError(403, "write actions are off: start the server with --write");
    const action = url.searchParams.get("action") as TrashAction | null;
    const id = url.searchParams.get("id") ?? "";
    if (action === null || !TRASH_ACTIONS.includes(action)) throw new HttpError(400, "unknown action");
    const what = `Trash entry <code>${e(id)}</code>${action === "purge" ? ": deleted for good" : ""}.`;
    const fields = { action, id, csrf: csrfTokenFor(token, `trash:${id}`) };
    return html(res, page(`Confirm ${action}`, confirmForm(action, what, "/trash/action", fields, "/trash")));
  }

  async function exportHtml(res: ServerResponse, info: SessionInfo): Promise<void> {
    const chunks = exportSession(info.path, { ...storeOptions, format: "html", redactOutput: true, onWarning: () => {} })[
      Symbol.asyncIterator
    ]();
    // The first piece before the headers: an export that fails at once is an error page, not a download.
    const first = await chunks.next();
    res.setHeader("Content-Disposition", `attachment; filename="${info.id.replace(/[^\w.-]/g, "_")}.html"`);
    res.setHeader("Content-Security-Policy", "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'");
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    for (let next = first; next.done !== true; next = await chunks.next()) res.write(next.value);
    res.end();
  }

  async function post(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (!write) throw new HttpError(403, "write actions are off: start the server with --write");
    const form = new URLSearchParams(await readBody(req));
    let target: string;
    if (url.pathname === "/trash/action") {
      const id = form.get("id") ?? "";
      if (!csrfOk(form.get("csrf"), token, `trash:${id}`)) throw new HttpError(403, "missing or wrong CSRF token");
      const action = form.get("action") as TrashAction | null;
      if (action === null || !TRASH_ACTIONS.includes(action)) throw new HttpError(400, "unknown action");
      // Exactly the confirmed entry: a second submit of a purge must not find another one by prefix.
      if (!(await store.trash()).some((t) => t.trashId === id)) throw new HttpError(404, `nothing in the trash is ${id}`);
      target = await runTrashAction(store, action, id);
    } else {
      const m = /^\/s\/([^/]+)\/action$/.exec(url.pathname);
      if (m === null) throw new HttpError(404, "not found");
      const id = decoded(m[1]!);
      if (!csrfOk(form.get("csrf"), token, id)) throw new HttpError(403, "missing or wrong CSRF token");
      const action = form.get("action") as ViewerAction | null;
      if (action === null || !VIEWER_ACTIONS.includes(action)) throw new HttpError(400, "unknown action");
      // Exactly the confirmed session, read afresh: once it is gone (a second submit of an rm), an id
      // it prefixes is another session, never a match.
      plain = null;
      const info = await findSession(id);
      if (info.id !== id) throw new HttpError(404, `no session ${id}`);
      target = await runAction(store, action, info, action === "fork" ? form.get("at") : null, options.hooks ?? {});
    }
    plain = null;
    costs.at = 0;
    res.writeHead(303, { Location: target });
    res.end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  for (const name of [shownHost, "localhost", "127.0.0.1"]) allowedHosts.add(`${name}:${port}`.toLowerCase());
  return {
    url: `http://${shownHost}:${port}/?token=${token}`,
    port,
    token,
    server,
    async close() {
      for (const stop of [...watchers]) stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > 64 * 1024) {
        reject(new HttpError(413, "request too large"));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
