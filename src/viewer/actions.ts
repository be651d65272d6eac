import { escapeHtml as e } from "../interchange/html-text.ts";
import type { SessionInfo } from "../session/session-info.ts";
import { SessionManager } from "../session/session-manager.ts";
import { sessionHref } from "./page.ts";
import type { ViewerStore } from "./viewer-store.ts";

/** The write actions of a session (with `--write`): the lifecycle's and the CLI's own calls. */
export const VIEWER_ACTIONS = ["pin", "unpin", "archive", "unarchive", "rm", "fork", "redact"] as const;
export type ViewerAction = (typeof VIEWER_ACTIONS)[number];

/** The trash's write actions. */
export const TRASH_ACTIONS = ["restore", "purge"] as const;
export type TrashAction = (typeof TRASH_ACTIONS)[number];

/** What the host (the CLI) lends the viewer for actions it owns: `redact` runs the CLI's own command. */
export interface ViewerHooks {
  /** Scrubs the session's secrets in place (the CLI's `redact <id>`); resolves to a one-line report. */
  redact?: (sessionId: string) => Promise<string>;
}

/** The links that lead to each action's confirmation page (nothing is done by a GET). */
export function actionFormHtml(sessionId: string, at: string | null): string {
  const base = `${sessionHref(sessionId)}/confirm?action=`;
  const links = VIEWER_ACTIONS.map((a) => {
    const atParam = a === "fork" && at !== null ? `&at=${encodeURIComponent(at)}` : "";
    return `<a class="action" href="${e(base + a + atParam)}">${e(a)}…</a>`;
  });
  const exportLink = `<a class="action" href="${e(sessionHref(sessionId))}/export.html">export HTML</a>`;
  return `<p class="actions">Actions: ${links.join(" ")} ${exportLink}</p>`;
}

/** Runs a confirmed action on a session; resolves to where the browser goes next. */
export async function runAction(
  store: ViewerStore,
  action: ViewerAction,
  info: SessionInfo,
  at: string | null,
  hooks: ViewerHooks,
): Promise<string> {
  const life = () => store.lifecycle();
  switch (action) {
    case "pin":
      await life().pin(info);
      return sessionHref(info.id);
    case "unpin":
      await life().unpin(info);
      return sessionHref(info.id);
    case "archive":
      await life().archive(info);
      return sessionHref(info.id);
    case "unarchive":
      await life().unarchive(info);
      return sessionHref(info.id);
    case "rm":
      await life().rm(info);
      return "/trash";
    case "fork": {
      const fork = await SessionManager.forkFrom(info.path, info.cwd, {
        ...store.options,
        rehydrate: "lazy",
        ...(at !== null ? { atEntryId: at } : {}),
      });
      await fork.close();
      return sessionHref(fork.sessionId);
    }
    case "redact":
      if (hooks.redact === undefined) throw new Error("redact is not available here");
      await hooks.redact(info.id);
      return sessionHref(info.id);
  }
}

/** Runs a confirmed trash action; resolves to where the browser goes next. */
export async function runTrashAction(store: ViewerStore, action: TrashAction, trashId: string): Promise<string> {
  const life = store.lifecycle();
  if (action === "restore") {
    const info = await life.restore(trashId);
    return sessionHref(info.id);
  }
  await life.purge({ refs: [trashId] });
  return "/trash";
}
