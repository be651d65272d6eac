import type { SessionEntry, SessionHeader } from "../format/types.ts";

/** One artifact of the session as an export shows it: its metadata and, bounded, its text. */
export interface SourceArtifact {
  id: string;
  uri: string;
  name: string | null;
  toolType: string;
  summary: string;
  contentType: string;
  sizeBytes: number;
  /** The first `DEFAULT_ARTIFACT_EMBED_BYTES` of a text artifact; null when it is not text or unreadable. */
  text: string | null;
  /** True when `text` is only the beginning of the content. */
  cut: boolean;
}

/**
 * What the renderers read (pure): the session's header, every entry in file order (the tree), the
 * chosen leaf and how to turn blob refs back into their data. Built by `exportSession` from an
 * open session; tests build it from plain values.
 */
export interface TranscriptSource {
  header: SessionHeader;
  /** Every entry of the session, in file order. */
  entries: SessionEntry[];
  /** The entry whose branch (root → it) is exported or shown first; null for an empty session. */
  leafId: string | null;
  /** Resolves blob refs in a value to the original data (images back to base64). */
  rehydrate<T>(value: T): T;
  artifacts: SourceArtifact[];
}

/**
 * The artifact text an HTML or Markdown export embeds, per artifact, at most.
 * @default 65536
 */
export const DEFAULT_ARTIFACT_EMBED_BYTES = 64 * 1024;

/** The entries from the root to `leafId`, in order (empty for null); an unknown parent ends the walk. */
export function branchOf(entries: readonly SessionEntry[], leafId: string | null): SessionEntry[] {
  const byId = new Map<string, SessionEntry>();
  for (const e of entries) byId.set(e.id, e);
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  let at = leafId === null ? undefined : byId.get(leafId);
  while (at !== undefined && !seen.has(at.id)) {
    seen.add(at.id);
    path.push(at);
    at = at.parentId === null ? undefined : byId.get(at.parentId);
  }
  return path.reverse();
}
