import { addByteKinds, emptyByteKinds, type ByteKinds } from "./line-kinds.ts";

/** What a store knows of one session's space, before blobs are shared out. */
export interface SessionSpace {
  id: string;
  cwd: string;
  /** The session file (file tree), or null (database). */
  path: string | null;
  /** The session's own bytes (file size, or header and rows), by kind. */
  kinds: ByteKinds;
  /** Blobs its lines (and its quarantine and backup files) reference. */
  blobRefs: ReadonlySet<string>;
  /** Bytes of its artifacts. */
  artifacts: number;
  /** Bytes of its quarantine file. */
  quarantine: number;
  /** Bytes of its backups (`.jsonl.bak`). */
  backups: number;
}

/** One row of `du`: a session, or every session of a cwd. */
export interface SpaceRow {
  /** Session id (by session) or null (by cwd). */
  id: string | null;
  cwd: string;
  path: string | null;
  sessions: number;
  /** The session bytes (file or rows); equals the sum of `kinds`. */
  sessionBytes: number;
  kinds: ByteKinds;
  /** Bytes of blobs only this row's sessions reference (deleting them frees these). */
  exclusiveBlobBytes: number;
  /** Bytes of blobs referenced here and by some other row too (counted whole in each such row). */
  sharedBlobBytes: number;
  exclusiveBlobs: number;
  sharedBlobs: number;
  /** Referenced blobs that are not in the blob store. */
  missingBlobs: number;
  artifacts: number;
  quarantine: number;
  backups: number;
  /** What removing the row would free: session bytes, exclusive blobs, artifacts, quarantine, backups. */
  total: number;
}

/** `du`'s grouping. */
export type SpaceGrouping = "session" | "cwd";

/**
 * The `du` rows of a store: one per session or per cwd, largest `total` first (then by cwd and
 * id, so equal sizes keep one order). A blob is exclusive to a row when no other row references
 * it, shared otherwise. Pure.
 */
export function spaceRows(sessions: readonly SessionSpace[], blobSizes: ReadonlyMap<string, number>, by: SpaceGrouping): SpaceRow[] {
  const groups = new Map<string, SessionSpace[]>();
  for (const s of sessions) {
    const key = by === "session" ? `s\0${s.id}\0${s.path ?? ""}` : `c\0${s.cwd}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [s]);
    else group.push(s);
  }
  const rowsOf = new Map<string, number>(); // hash → how many rows reference it
  const refsOf = new Map<string, Set<string>>();
  for (const [key, group] of groups) {
    const refs = new Set<string>();
    for (const s of group) for (const h of s.blobRefs) refs.add(h);
    refsOf.set(key, refs);
    for (const h of refs) rowsOf.set(h, (rowsOf.get(h) ?? 0) + 1);
  }
  const rows: SpaceRow[] = [];
  for (const [key, group] of groups) {
    const first = group[0]!;
    const row: SpaceRow = {
      id: by === "session" ? first.id : null,
      cwd: first.cwd,
      path: by === "session" ? first.path : null,
      sessions: group.length,
      sessionBytes: 0,
      kinds: emptyByteKinds(),
      exclusiveBlobBytes: 0,
      sharedBlobBytes: 0,
      exclusiveBlobs: 0,
      sharedBlobs: 0,
      missingBlobs: 0,
      artifacts: 0,
      quarantine: 0,
      backups: 0,
      total: 0,
    };
    for (const s of group) {
      addByteKinds(row.kinds, s.kinds);
      row.artifacts += s.artifacts;
      row.quarantine += s.quarantine;
      row.backups += s.backups;
    }
    row.sessionBytes = Object.values(row.kinds).reduce((a, b) => a + b, 0);
    for (const h of refsOf.get(key)!) {
      const size = blobSizes.get(h);
      if (size === undefined) row.missingBlobs++;
      else if (rowsOf.get(h) === 1) {
        row.exclusiveBlobs++;
        row.exclusiveBlobBytes += size;
      } else {
        row.sharedBlobs++;
        row.sharedBlobBytes += size;
      }
    }
    row.total = row.sessionBytes + row.exclusiveBlobBytes + row.artifacts + row.quarantine + row.backups;
    rows.push(row);
  }
  return rows.sort((a, b) => b.total - a.total || cmp(a.cwd, b.cwd) || cmp(a.id ?? "", b.id ?? "") || cmp(a.path ?? "", b.path ?? ""));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The store's totals: every session's kinds, and the blob store split into referenced and not. */
export interface SpaceTotals {
  sessions: number;
  sessionBytes: number;
  kinds: ByteKinds;
  /** Blobs some session references, and their bytes. */
  referencedBlobs: number;
  referencedBlobBytes: number;
  /** Blobs no session references (gc collects them after its grace period). */
  unreferencedBlobs: number;
  unreferencedBlobBytes: number;
  missingBlobs: number;
  artifacts: number;
  quarantine: number;
  backups: number;
  /**
   * File store: bytes in the trash (restorable until purged) and in unbundle spools (what a running
   * or killed unbundle copied; the next unbundle reclaims a killed one's). Absent for a database.
   */
  trash?: number;
  spools?: number;
}

/** Totals over a store's sessions and its blob store. Pure. */
export function spaceTotals(sessions: readonly SessionSpace[], blobSizes: ReadonlyMap<string, number>): SpaceTotals {
  const kinds = emptyByteKinds();
  const refs = new Set<string>();
  const totals: SpaceTotals = {
    sessions: sessions.length,
    sessionBytes: 0,
    kinds,
    referencedBlobs: 0,
    referencedBlobBytes: 0,
    unreferencedBlobs: 0,
    unreferencedBlobBytes: 0,
    missingBlobs: 0,
    artifacts: 0,
    quarantine: 0,
    backups: 0,
  };
  for (const s of sessions) {
    addByteKinds(kinds, s.kinds);
    for (const h of s.blobRefs) refs.add(h);
    totals.artifacts += s.artifacts;
    totals.quarantine += s.quarantine;
    totals.backups += s.backups;
  }
  totals.sessionBytes = Object.values(kinds).reduce((a, b) => a + b, 0);
  for (const h of refs) if (!blobSizes.has(h)) totals.missingBlobs++;
  for (const [h, size] of blobSizes) {
    if (refs.has(h)) {
      totals.referencedBlobs++;
      totals.referencedBlobBytes += size;
    } else {
      totals.unreferencedBlobs++;
      totals.unreferencedBlobBytes += size;
    }
  }
  return totals;
}
