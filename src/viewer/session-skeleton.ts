import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { isRecord, type SessionEntry, type SessionHeader } from "../format/types.ts";

/** An entry's place in the tree: what a page needs to find a branch without parsing the entry. */
export interface TreeNode {
  id: string;
  parentId: string | null;
}

/**
 * A plain v3 session file read for a page without parsing it: each entry's id, parent, and where its
 * line is. A page then parses only the lines it shows, so the first screen of a 100 MB session costs
 * a scan for line ends and line heads, not a `JSON.parse` of every line. Grows with the file (an
 * appended tail is scanned from where the last scan stopped).
 */
export interface Skeleton {
  path: string;
  header: SessionHeader;
  nodes: TreeNode[];
  offsets: number[];
  lengths: number[];
  /** Bytes scanned: the end of the last complete line. */
  scanned: number;
  /** The file's identity when scanned: a different inode or a smaller size means it was rewritten. */
  ino: number;
  byId: Map<string, number>;
}

/** `{"type":"<kind>","id":"<id>","parentId":null|"<id>"` at a line's start, as the store's writers lay entries out. */
const HEAD = /^\{"type":"([a-z_]+)","id":"((?:[^"\\]|\\.)*)","parentId":(null|"(?:[^"\\]|\\.)*")/;

/** Reads `[start, end)` of an open file. */
function readRange(fd: number, start: number, end: number): Buffer {
  const buf = Buffer.allocUnsafe(end - start);
  let got = 0;
  while (got < buf.length) {
    const n = readSync(fd, buf, got, buf.length - got, start + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

/**
 * One line's node: from its head when laid out as ours are, else from the whole line; "unknown" for
 * anything a load treats specially (damaged, glued, encrypted, no id): then the page opens the session whole.
 */
function nodeOf(line: Buffer): TreeNode | "unknown" {
  const head = line.toString("utf8", 0, Math.min(line.length, 512));
  const m = HEAD.exec(head);
  if (m !== null) {
    if (m[1] === "encrypted") return "unknown";
    return { id: JSON.parse(`"${m[2]}"`) as string, parentId: m[3] === "null" ? null : (JSON.parse(m[3]!) as string) };
  }
  let value: unknown;
  try {
    value = JSON.parse(line.toString("utf8"));
  } catch {
    return "unknown"; // a damaged or glued line: the load's own rules (split, report) apply, so the page opens it whole
  }
  if (!isRecord(value) || typeof value.id !== "string" || value.type === "encrypted") return "unknown";
  return { id: value.id, parentId: typeof value.parentId === "string" ? value.parentId : null };
}

const CHUNK = 4 << 20;

/**
 * Scans `path` (from `from`'s end when it is the same file grown) into a skeleton; null when the file
 * is not a plain v3 session (encrypted, an older version to migrate, not a session): those pages
 * open the session whole.
 */
export function scanSkeleton(path: string, from: Skeleton | null = null): Skeleton | null {
  const fd = openSync(path, "r");
  try {
    const st = fstatSync(fd);
    let sk: Skeleton;
    if (from !== null && from.ino === st.ino && st.size >= from.scanned) sk = from;
    else {
      const first = readRange(fd, 0, Math.min(st.size, 1 << 20));
      const nl = first.indexOf(10);
      if (nl === -1) return null;
      let header: unknown;
      try {
        header = JSON.parse(first.toString("utf8", 0, nl));
      } catch {
        return null;
      }
      if (!isRecord(header) || header.type !== "session" || header.version !== 3 || "encryption" in header) return null;
      sk = {
        path,
        header: header as unknown as SessionHeader,
        nodes: [],
        offsets: [],
        lengths: [],
        scanned: nl + 1,
        ino: st.ino,
        byId: new Map(),
      };
    }
    let at = sk.scanned;
    let carry: Buffer | null = null;
    let carryStart = at;
    while (at < st.size) {
      const chunk = readRange(fd, at, Math.min(st.size, at + CHUNK));
      if (chunk.length === 0) break;
      const buf: Buffer = carry === null ? chunk : Buffer.concat([carry, chunk]);
      const base = carry === null ? at : carryStart;
      let start = 0;
      for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, start)) {
        const line = buf.subarray(start, nl);
        const node = line.length === 0 ? null : nodeOf(line);
        // A repeated id is renamed by a load (format/unique-ids.ts): the page opens such a session whole.
        if (node === "unknown" || (node !== null && sk.byId.has(node.id))) return null;
        if (node !== null) {
          sk.byId.set(node.id, sk.nodes.length);
          sk.nodes.push(node);
          sk.offsets.push(base + start);
          sk.lengths.push(line.length);
        }
        start = nl + 1;
      }
      sk.scanned = base + start;
      carry = start < buf.length ? Buffer.from(buf.subarray(start)) : null;
      carryStart = base + start;
      at += chunk.length;
    }
    return sk;
  } finally {
    closeSync(fd);
  }
}

/** Parses the entry lines of `ids` (unknown ids are left out). */
export function readSkeletonEntries(sk: Skeleton, ids: readonly string[]): Map<string, SessionEntry> {
  const out = new Map<string, SessionEntry>();
  const fd = openSync(sk.path, "r");
  try {
    for (const id of ids) {
      const i = sk.byId.get(id);
      if (i === undefined) continue;
      const line = readRange(fd, sk.offsets[i]!, sk.offsets[i]! + sk.lengths[i]!);
      try {
        const value: unknown = JSON.parse(line.toString("utf8"));
        if (isRecord(value)) out.set(id, value as unknown as SessionEntry);
      } catch {}
    }
  } finally {
    closeSync(fd);
  }
  return out;
}

/** The path from the root to `leaf`, as nodes (an unknown parent or a cycle ends the walk). */
export function pathTo(nodes: readonly TreeNode[], byId: ReadonlyMap<string, number>, leaf: string | null): TreeNode[] {
  const path: TreeNode[] = [];
  const seen = new Set<string>();
  let i = leaf === null ? undefined : byId.get(leaf);
  while (i !== undefined) {
    const node = nodes[i]!;
    if (seen.has(node.id)) break;
    seen.add(node.id);
    path.push(node);
    i = node.parentId === null ? undefined : byId.get(node.parentId);
  }
  return path.reverse();
}
