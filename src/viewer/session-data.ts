import { viewOf } from "../interchange/message-parts.ts";
import { artifactsOf } from "../interchange/export-session.ts";
import { DEFAULT_ARTIFACT_EMBED_BYTES } from "../interchange/transcript-source.ts";
import { redactForSharing } from "../session/redact-for-sharing.ts";
import type { SessionInfo } from "../session/session-info.ts";
import type { SessionManager } from "../session/session-manager.ts";
import { sharingRedactorOf } from "../storage/sharing-key.ts";
import { resolveSessionManagerOptions } from "../session/session-options.ts";
import type { SessionPageData } from "./session-view.ts";
import type { ViewerSession, ViewerStore } from "./viewer-store.ts";
import { sessionHref } from "./page.ts";

/** An open session and the page data made from it (entries shared through the redactor in `--redact` mode). */
export interface LoadedSession {
  info: SessionInfo;
  manager: SessionManager;
  data: SessionPageData;
  /** The sharing redactor in `--redact` mode; the identity otherwise. */
  share: <T>(value: T) => T;
}

/** Opens `info` and builds what its page shows; the caller closes `manager`. */
export async function loadSession(
  store: ViewerStore,
  info: SessionInfo,
  all: readonly ViewerSession[],
  options: { redact: boolean; leaf: string | null },
): Promise<LoadedSession> {
  const manager = await store.open(info);
  const resolved = resolveSessionManagerOptions(store.options);
  const redactor = options.redact ? await sharingRedactorOf(resolved.store, store.options.root, true) : null;
  const share = <T>(value: T): T => (redactor === null ? value : redactForSharing(value, redactor, new Map()));
  const listed = all.find((s) => s.id === info.id);
  const leafId = manager.getLeafId();
  const shownLeaf = options.leaf !== null && manager.getEntry(options.leaf) !== undefined ? options.leaf : leafId;
  const data: SessionPageData = {
    header: share(manager.header),
    entries: manager.getEntries().map(share),
    leafId,
    shownLeaf,
    artifacts: artifactsOf(manager, DEFAULT_ARTIFACT_EMBED_BYTES).map((a) =>
      share({ ...a, text: null }),
    ),
    size: info.size,
    models: listed?.models ?? [],
    cost: listed?.cost ?? null,
    forks: all
      .filter((s) => s.parentSession !== null && (s.parentSession === info.id || s.parentSession === info.path))
      .map((s) => ({ id: s.id, title: share(s.title ?? s.firstMessage ?? s.id) })),
    imageLink: (entryId, index) => `${sessionHref(info.id)}/image/${encodeURIComponent(entryId)}/${index}`,
  };
  return { info, manager, data, share };
}

/** The bytes and type of image `index` of an entry (read back from the blob store), or null. */
export function imageOf(manager: SessionManager, entryId: string, index: number): { type: string; bytes: Buffer } | null {
  const entry = manager.getEntry(entryId);
  if (entry === undefined) return null;
  const view = viewOf(manager.rehydrate(entry));
  const part = view?.parts[index];
  if (part === undefined || part.kind !== "image") return null;
  if (!/^image\/[a-z0-9.+-]+$/i.test(part.mimeType)) return null;
  const payload = part.data.replace(/[ \t\r\n]/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(payload)) return null;
  return { type: part.mimeType.toLowerCase(), bytes: Buffer.from(payload, "base64") };
}
