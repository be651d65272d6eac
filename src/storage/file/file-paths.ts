import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { SessionHeader } from "../../format/types.ts";
import { cwdBucket, sessionFileName } from "../../session/paths.ts";
import { ensureSessionDir } from "../../session/session-dirs.ts";
import type { ResolvedSessionManagerOptions } from "../../session/session-options.ts";

/** Where a new session with this header lives: `<sessionsDir>/<cwd bucket>/<timestamp>_<id>.jsonl`. */
export function sessionPathFor(header: SessionHeader, options: ResolvedSessionManagerOptions): string {
  return join(options.sessionsDir, cwdBucket(header.cwd, options.layout), sessionFileName(new Date(header.timestamp), header.id));
}

export function ensureParent(path: string, options: Pick<ResolvedSessionManagerOptions, "sessionsDir" | "fsync">): void {
  ensureSessionDir(dirname(path), options.sessionsDir, options.fsync);
}

export function ensureRemoved(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // best effort: a leftover copy of artifacts is harmless
  }
}

/**
 * Emits a session's lines after its header, whole lines only (a whole-session fork's copied body),
 * and calls `register` (the store learns where the session lives) before they can name a blob ref:
 * at the latest before it returns, which is before the file is renamed into place.
 */
export type BodyWriter = (emit: (data: Buffer) => void, register: () => void) => void;
