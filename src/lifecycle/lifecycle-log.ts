import * as fs from "node:fs";
import { join } from "node:path";
import { errnoCode, TranscriptStoreError, type WarningHandler } from "../errors.ts";
import { ensureDir, FILE_MODE, io, writeFully } from "../io.ts";

/** What one line of the lifecycle log records. */
export type LifecycleOp = "pin" | "unpin" | "archive" | "unarchive" | "trash" | "restore" | "purge";

/** One line of `<root>/lifecycle.jsonl`. */
export interface LifecycleRecord {
  op: LifecycleOp;
  /** The session id. */
  id: string;
  /** ISO time of the change. */
  at: string;
  /** The session file (file tree) or `<database>#<id>`, for the record. */
  path?: string;
  /** The trash entry a trash, restore or purge concerns. */
  trashId?: string;
}

import type { SessionFlags } from "./lifecycle-driver.ts";

export type { SessionFlags };

const OPS: ReadonlySet<string> = new Set(["pin", "unpin", "archive", "unarchive", "trash", "restore", "purge"]);

/** `<root>/lifecycle.jsonl`: the store's own append-only record of pins, archives and removals. */
export function lifecycleLogPath(root: string): string {
  return join(root, "lifecycle.jsonl");
}

/**
 * Appends one record as one whole line (O_APPEND, no link followed, fsynced). A torn last line a
 * crashed writer left is closed by a newline first, so the new record stands on its own line.
 */
export function appendLifecycleRecord(root: string, record: LifecycleRecord): void {
  ensureDir(root);
  const path = lifecycleLogPath(root);
  let fd: number;
  try {
    fd = io.openSync(path, fs.constants.O_RDWR | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, FILE_MODE);
  } catch (err) {
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot open the lifecycle log ${path}: ${(err as Error).message}`, {
      path,
      cause: err,
    });
  }
  try {
    const size = io.fstatSync(fd).size;
    let torn = false;
    if (size > 0) {
      const last = Buffer.alloc(1);
      io.readSync(fd, last, 0, 1, size - 1);
      torn = last[0] !== 0x0a;
    }
    writeFully(fd, Buffer.from(`${torn ? "\n" : ""}${JSON.stringify(record)}\n`));
    io.fsyncSync(fd);
  } catch (err) {
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot append to the lifecycle log ${path}: ${(err as Error).message}`, {
      path,
      cause: err,
    });
  } finally {
    io.closeSync(fd);
  }
}

/**
 * The log's records in order. A line that is not a record (a torn line of a crash, a hand edit)
 * is skipped and reported as a `MALFORMED_LINES` warning; the file is never rewritten.
 */
export function readLifecycleLog(root: string, onWarning?: WarningHandler): LifecycleRecord[] {
  const path = lifecycleLogPath(root);
  let text: string;
  try {
    text = io.readFileSync(path, "utf8") as string;
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return [];
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot read the lifecycle log ${path}: ${(err as Error).message}`, {
      path,
      cause: err,
    });
  }
  const records: LifecycleRecord[] = [];
  const bad: number[] = [];
  const lines = text.split("\n");
  for (const [i, line] of lines.entries()) {
    if (line.trim() === "") continue;
    const record = parseRecord(line);
    if (record === null) bad.push(i + 1);
    else records.push(record);
  }
  if (bad.length > 0)
    onWarning?.({ code: "MALFORMED_LINES", message: `Lifecycle log lines skipped (not records): ${bad.join(", ")}`, path });
  return records;
}

function parseRecord(line: string): LifecycleRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const r = value as Record<string, unknown>;
  if (typeof r.op !== "string" || !OPS.has(r.op) || typeof r.id !== "string" || typeof r.at !== "string") return null;
  return r as unknown as LifecycleRecord;
}

/**
 * Each live session's flags after the records, by session id (sessions with neither flag left
 * out). Flags belong to one session instance: `trash` takes them from the id into its trash entry,
 * `restore` of that entry gives them back, `purge` of it drops them; a session of the same id that
 * comes back live meanwhile (an import, an unbundle) starts with its own.
 */
export function foldFlags(records: readonly LifecycleRecord[]): Map<string, SessionFlags> {
  const flags = new Map<string, SessionFlags>();
  const trashed = new Map<string, SessionFlags>();
  for (const r of records) {
    if (r.op === "trash" || r.op === "restore" || r.op === "purge") {
      if (r.trashId === undefined) {
        // a record without its entry (hand-made): only a purge changes flags, of the id, as it did
        if (r.op === "purge") flags.delete(r.id);
        continue;
      }
      const held = r.op === "trash" ? flags.get(r.id) : trashed.get(r.trashId);
      if (r.op === "trash") {
        flags.delete(r.id);
        if (held !== undefined) trashed.set(r.trashId, held);
      } else {
        trashed.delete(r.trashId);
        if (r.op === "restore" && held !== undefined) flags.set(r.id, held);
      }
      continue;
    }
    const f = flags.get(r.id) ?? { pinned: false, archived: false };
    if (r.op === "pin") f.pinned = true;
    else if (r.op === "unpin") f.pinned = false;
    else if (r.op === "archive") f.archived = true;
    else if (r.op === "unarchive") f.archived = false;
    flags.set(r.id, f);
  }
  for (const [id, f] of flags) if (!f.pinned && !f.archived) flags.delete(id);
  return flags;
}

/** Ids of the sessions archived in the store at `root` (what resume pickers leave out). */
export function archivedIds(root: string, onWarning?: WarningHandler): Set<string> {
  const out = new Set<string>();
  for (const [id, f] of foldFlags(readLifecycleLog(root, onWarning))) if (f.archived) out.add(id);
  return out;
}
