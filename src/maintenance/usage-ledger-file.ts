import { constants } from "node:fs";
import { dirname, join } from "node:path";
import type { LedgerRow } from "../accounting/usage-report.ts";
import type { UsageRow } from "../accounting/usage-rows.ts";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { LineSplitter } from "../format/line-splitter.ts";
import { ensureDir, FILE_MODE, fsyncDir, io, writeFully } from "../io.ts";
import { DEFAULT_CHUNK_SIZE } from "../session/session-file-reader.ts";

/** The file of a store root that keeps the usage rows of deleted sessions. */
export const USAGE_LEDGER_FILE = "usage-ledger.jsonl";

/** `<root>/usage-ledger.jsonl`. */
export function usageLedgerPath(root: string): string {
  return join(root, USAGE_LEDGER_FILE);
}

/** A ledger line that is not a usage row (a torn write, an edit by hand): reported, left in place. */
export interface LedgerProblem {
  path: string;
  line: number;
  offset: number;
  reason: string;
}

/** What one line of the ledger file holds. */
interface LedgerLine extends UsageRow {
  type: "usage_row";
  deletedAt: string;
}

function isLedgerLine(value: unknown): value is LedgerLine {
  const v = value as LedgerLine;
  return (
    typeof v === "object" &&
    v !== null &&
    v.type === "usage_row" &&
    typeof v.sessionId === "string" &&
    typeof v.key === "string" &&
    typeof v.deletedAt === "string" &&
    typeof v.tokens === "object" &&
    v.tokens !== null &&
    typeof v.cost === "object" &&
    v.cost !== null
  );
}

/**
 * The rows of the ledger file, each once (a row recorded twice, by a retry or two recorders at
 * once, counts once: the first). Damaged lines are reported, not dropped from the file. An absent
 * file is an empty ledger.
 */
export function readLedgerFile(path: string): { rows: LedgerRow[]; problems: LedgerProblem[] } {
  const rows: LedgerRow[] = [];
  const problems: LedgerProblem[] = [];
  const seen = new Set<string>();
  let fd: number;
  try {
    fd = io.openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return { rows, problems };
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot read the usage ledger ${path}: ${(err as Error).message}`, {
      path,
      cause: err,
    });
  }
  const splitter = new LineSplitter(
    ({ bytes, lineNumber, offset, fullLength }) => {
      if (bytes.length === 0) return; // the newline a recorder wrote after a torn line
      let value: unknown;
      try {
        value = fullLength === undefined ? JSON.parse(bytes.toString("utf8")) : undefined;
      } catch (err) {
        problems.push({ path, line: lineNumber, offset, reason: `invalid JSON: ${(err as Error).message}` });
        return;
      }
      if (!isLedgerLine(value)) {
        problems.push({ path, line: lineNumber, offset, reason: fullLength !== undefined ? "line too long" : "not a usage row" });
        return;
      }
      const id = `${value.sessionId}\0${value.key}`;
      if (seen.has(id)) return;
      seen.add(id);
      const { type: _type, ...row } = value;
      rows.push({ ...row, deleted: true, deletedAt: value.deletedAt });
    },
    { maxLineBytes: 1 << 20 },
  );
  const buf = Buffer.allocUnsafe(DEFAULT_CHUNK_SIZE);
  try {
    for (let n = io.readSync(fd, buf, 0, buf.length, null); n > 0; n = io.readSync(fd, buf, 0, buf.length, null))
      splitter.push(buf.subarray(0, n));
    splitter.end();
  } catch (err) {
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot read the usage ledger ${path}: ${(err as Error).message}`, {
      path,
      cause: err,
    });
  } finally {
    io.closeSync(fd);
  }
  return { rows, problems };
}

/**
 * Appends usage rows to the ledger file, marked deleted at `deletedAt`: one write of whole lines
 * (O_APPEND, never through a link), fsynced, the directory too when the file is new. A line torn
 * by an earlier crash is closed with a newline first, so it stays one damaged line and the rows
 * land on their own. Rows the file already holds (same session and key) are not written again.
 * Returns how many were written.
 */
export function appendLedgerFile(path: string, rows: readonly UsageRow[], deletedAt: string): number {
  const have = new Set(readLedgerFile(path).rows.map((r) => `${r.sessionId}\0${r.key}`));
  const fresh = rows.filter((r) => !have.has(`${r.sessionId}\0${r.key}`));
  if (fresh.length === 0) return 0;
  const text = fresh.map((r) => `${JSON.stringify({ type: "usage_row", ...r, deletedAt })}\n`).join("");
  let fd: number | undefined;
  try {
    ensureDir(dirname(path), true);
    let created = false;
    try {
      fd = io.openSync(path, constants.O_RDWR | constants.O_APPEND | constants.O_NOFOLLOW);
    } catch (err) {
      if (errnoCode(err) !== "ENOENT") throw err;
      fd = io.openSync(path, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, FILE_MODE);
      created = true;
    }
    const size = io.fstatSync(fd).size;
    let lead = "";
    if (size > 0) {
      const last = Buffer.alloc(1);
      io.readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) lead = "\n";
    }
    writeFully(fd, Buffer.from(lead + text, "utf8"));
    io.fsyncSync(fd);
    if (created) fsyncDir(dirname(path));
  } catch (err) {
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `Cannot write the usage ledger ${path}: ${(err as Error).message}`, {
      path,
      cause: err,
    });
  } finally {
    if (fd !== undefined) io.closeSync(fd);
  }
  return fresh.length;
}
