import type { SessionInfo } from "../session/session-info.ts";
import type { ResolvedSessionManagerOptions } from "../session/session-options.ts";
import type { StorageBackend } from "../storage/session-storage.ts";

/** What a listing shows of the lifecycle: the flags, and whether archived sessions are listed. */
export interface LifecycleListOptions {
  /** List archived sessions too (marked `archived: true`). @default false */
  includeArchived?: boolean;
}

/**
 * A listing with the store's lifecycle applied: trashed sessions never listed, archived ones only
 * when asked for, each session marked `pinned`/`archived` when it is.
 */
export async function applyLifecycle(
  infos: SessionInfo[],
  backend: StorageBackend,
  options: ResolvedSessionManagerOptions,
  list: LifecycleListOptions = {},
): Promise<SessionInfo[]> {
  const driver = backend.lifecycle?.(options);
  if (driver === undefined) return infos;
  const flags = await driver.flags();
  if (flags.size === 0) return infos;
  const out: SessionInfo[] = [];
  for (const info of infos) {
    const f = flags.get(info.id);
    if (f === undefined) {
      out.push(info);
      continue;
    }
    if (f.trashed || (f.archived && !list.includeArchived)) continue;
    if (f.pinned) info.pinned = true;
    if (f.archived) info.archived = true;
    out.push(info);
  }
  return out;
}
