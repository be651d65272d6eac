import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { errnoCode } from "../errors.ts";
import { ensureDir, FILE_MODE, io, writeFully } from "../io.ts";

/** One `prune` that moved sessions to the trash: what `restore --last-prune` (or its id) brings back. */
export interface PruneRecord {
  /** `p<YYYYMMDD>-<HHMMSS>-<4 hex>`: sorts by time, unique enough to type. */
  pruneId: string;
  at: string;
  /** The trash entries it made, and their sessions. */
  trashIds: string[];
  sessionIds: string[];
}

/** `<root>/prune-log.jsonl`: one line per prune that trashed anything, appended (never rewritten). */
export function pruneLogPath(root: string): string {
  return join(resolve(root), "prune-log.jsonl");
}

/** A new prune id for `at`. */
export function newPruneId(at: Date): string {
  const t = at.toISOString();
  return `p${t.slice(0, 10).replaceAll("-", "")}-${t.slice(11, 19).replaceAll(":", "")}-${randomBytes(2).toString("hex")}`;
}

/** Appends a prune's record (one line, fsynced): the undo of that prune. */
export function recordPrune(root: string, record: PruneRecord): void {
  ensureDir(resolve(root));
  const fd = io.openSync(pruneLogPath(root), "a", FILE_MODE);
  try {
    writeFully(fd, Buffer.from(`${JSON.stringify(record)}\n`));
    io.fsyncSync(fd);
  } finally {
    io.closeSync(fd);
  }
}

/** Every prune recorded, oldest first; a line that does not parse (a torn last line) is skipped. */
export function readPrunes(root: string): PruneRecord[] {
  let text: string;
  try {
    text = io.readFileSync(pruneLogPath(root), "utf8") as string;
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return [];
    throw err;
  }
  const out: PruneRecord[] = [];
  for (const line of text.split("\n")) {
    try {
      const r = JSON.parse(line) as PruneRecord;
      if (typeof r.pruneId === "string" && Array.isArray(r.trashIds)) out.push(r);
    } catch {
      // a torn line: that prune's entries are still in the trash, restorable one by one
    }
  }
  return out;
}
