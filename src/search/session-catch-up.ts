import { createHash } from "node:crypto";
import type { Stats } from "node:fs";
import { errnoCode } from "../errors.ts";
import { decodeLine, stripBom } from "../format/decode-line.ts";
import type { RawRecord } from "../format/types.ts";
import { deriveId } from "../format/unique-ids.ts";
import { io } from "../io.ts";
import { ArtifactReader } from "./artifact-text.ts";
import { entryModel, entryTexts } from "./entry-text.ts";
import type { SqliteDatabase } from "./sqlite.ts";
import { IndexStatements, type SessionRow } from "./index-statements.ts";
import { insertSearchText } from "./text-tables.ts";

export type { SessionRow } from "./index-statements.ts";

/** Bytes read per call while catching up. @default 1 MiB */
export const CATCH_UP_CHUNK = 1 << 20;
/**
 * Longest line indexed: longer ones are inlined images or base64 payloads, never text worth 16 MiB.
 * They are read past, never held whole. @default 16 MiB
 */
export const MAX_INDEXED_LINE_BYTES = 16 << 20;
/** A long catch-up commits every this many bytes read (the offset stored with the rows it covers). */
const COMMIT_EVERY_BYTES = 16 << 20;

/** What catching up one file did. */
export interface CatchUpResult {
  outcome: "added" | "updated" | "reindexed" | "unchanged" | "removed";
  /** Bytes of the session file read past its indexed offset. */
  bytesRead: number;
  /** Bytes read to check the header is still the one indexed. */
  headerBytesRead: number;
  /** Bytes read from spilled tool outputs (artifacts). */
  artifactBytesRead: number;
  entries: number;
  malformedLines: number;
  /** Lines past `MAX_INDEXED_LINE_BYTES`, skipped. */
  largeLinesSkipped: number;
}

/** The file is the one indexed (same inode, size and mtime): nothing to read. */
export function unchangedFile(row: Pick<SessionRow, "dev" | "ino" | "size" | "mtime_ms">, st: Stats): boolean {
  return row.dev === st.dev && row.ino === st.ino && row.size === st.size && row.mtime_ms === st.mtimeMs;
}

function hashOf(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex").slice(0, 32);
}

function readAt(fd: number, length: number, position: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const n = io.readSync(fd, buf, done, length - done, position + done);
    if (n <= 0) break;
    done += n;
  }
  return done === length ? buf : buf.subarray(0, done);
}

/**
 * Brings one session file's rows up to date, reading only the bytes past its indexed offset. The
 * offset is stored in the transaction that holds the rows it covers: a killed indexer leaves every
 * session at a line boundary it fully indexed. A file whose inode changed,
 * that shrank below the offset, or whose header line changed was rewritten: its rows are dropped
 * and it is read from the start. Only complete lines are indexed (a torn or growing last line
 * waits for its newline).
 */
export class SessionCatchUp {
  private readonly sql: IndexStatements;

  constructor(private readonly db: SqliteDatabase) {
    this.sql = new IndexStatements(db);
  }

  /** Removes a session's rows (its file is gone). Inside the caller's transaction. */
  forget(sid: number): void {
    this.dropRows(sid);
    this.sql.deleteSession.run(sid);
  }

  /** Removes the rows of the file at `path`, if it has any (looked up under the caller's write lock). */
  forgetPath(path: string): boolean {
    const row = this.sql.byPath.get(path) as SessionRow | undefined;
    if (row === undefined) return false;
    this.forget(row.sid);
    return true;
  }

  private dropRows(sid: number): void {
    this.sql.deleteText.run(sid);
    this.sql.deleteEntries.run(sid);
  }

  /**
   * Catches up one file inside the caller's transaction (`BEGIN IMMEDIATE`: the rows read are
   * looked at again under the write lock). A long file commits on its way, the offset with the rows.
   */
  run(path: string): CatchUpResult {
    const result: CatchUpResult = {
      outcome: "unchanged",
      bytesRead: 0,
      headerBytesRead: 0,
      artifactBytesRead: 0,
      entries: 0,
      malformedLines: 0,
      largeLinesSkipped: 0,
    };
    let fd: number;
    try {
      fd = io.openSync(path, "r");
    } catch (err) {
      if (errnoCode(err) !== "ENOENT") throw err;
      const row = this.sql.byPath.get(path) as SessionRow | undefined;
      if (row !== undefined) {
        this.forget(row.sid);
        result.outcome = "removed";
      }
      return result;
    }
    try {
      this.catchUp(fd, path, io.fstatSync(fd), result);
    } finally {
      io.closeSync(fd);
    }
    return result;
  }

  private catchUp(fd: number, path: string, st: Stats, result: CatchUpResult): void {
    let row = this.sql.byPath.get(path) as SessionRow | undefined;
    // Looked at again inside the transaction: another process may have caught up meanwhile.
    if (row !== undefined && unchangedFile(row, st)) return;
    if (row !== undefined && this.rewritten(fd, row, st, result)) {
      this.dropRows(row.sid);
      row = { ...row, session_id: null, cwd: "", offset: 0, header_start: 0, header_len: 0, header_hash: "", records: 0, model: null };
      result.outcome = "reindexed";
    } else result.outcome = row === undefined ? "added" : "updated";
    if (row === undefined) {
      const sid = Number(this.sql.insertSession.get(path, st.dev, st.ino)!.sid);
      row = {
        sid,
        path,
        session_id: null,
        cwd: "",
        dev: st.dev,
        ino: st.ino,
        size: 0,
        mtime_ms: -1,
        offset: 0,
        header_start: 0,
        header_len: 0,
        header_hash: "",
        records: 0,
        model: null,
      };
    }
    row.dev = st.dev;
    row.ino = st.ino;
    // A file found to hold no session (another agent's transcript) is not read again until rewritten.
    if (!(row.session_id === null && row.header_hash === "none")) this.readLines(fd, path, row, st.size, result);
    row.size = st.size;
    row.mtime_ms = st.mtimeMs;
    this.store(row);
  }

  private store(row: SessionRow): void {
    this.sql.updateSession.run(
      row.session_id,
      row.cwd,
      row.dev,
      row.ino,
      row.size,
      row.mtime_ms,
      row.offset,
      row.header_start,
      row.header_len,
      row.header_hash,
      row.records,
      row.model,
      row.sid,
    );
  }

  /** Another inode, a shrink below the offset, or another header line: the file was rewritten. */
  private rewritten(fd: number, row: SessionRow, st: Stats, result: CatchUpResult): boolean {
    if (row.dev !== st.dev || row.ino !== st.ino || st.size < row.offset) return true;
    if (row.header_len === 0) return false;
    const header = readAt(fd, row.header_len, row.header_start);
    result.headerBytesRead += header.length;
    return hashOf(header) !== row.header_hash;
  }

  private readLines(fd: number, path: string, row: SessionRow, size: number, result: CatchUpResult): void {
    let position = row.offset;
    // The open (unterminated) line: its pieces, joined once its newline arrives (never re-copied per chunk).
    let open: Buffer[] = [];
    let openLength = 0;
    let skipping = false;
    let sinceCommit = 0;
    const artifacts = new ArtifactReader(path);
    while (position < size) {
      const chunk = readAt(fd, Math.min(CATCH_UP_CHUNK, size - position), position);
      if (chunk.length === 0) break;
      result.bytesRead += chunk.length;
      sinceCommit += chunk.length;
      const chunkStart = position;
      position += chunk.length;
      let start = 0;
      for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
        const piece = chunk.subarray(start, nl);
        if (skipping || openLength + piece.length > MAX_INDEXED_LINE_BYTES) this.skipLine(row, result);
        else this.line(openLength === 0 ? piece : Buffer.concat([...open, piece]), row.offset, row, result, artifacts);
        open = [];
        openLength = 0;
        skipping = false;
        start = nl + 1;
        row.offset = chunkStart + start;
        if (row.session_id === null && row.header_hash === "none") return;
      }
      if (start < chunk.length && !skipping) {
        const rest = chunk.subarray(start);
        if (openLength + rest.length > MAX_INDEXED_LINE_BYTES) {
          skipping = true; // past the bound: the rest of the line is read, never held
          open = [];
          openLength = 0;
        } else {
          open.push(rest);
          openLength += rest.length;
        }
      }
      if (sinceCommit >= COMMIT_EVERY_BYTES) {
        this.store(row);
        this.db.exec("COMMIT");
        this.db.exec("BEGIN IMMEDIATE");
        sinceCommit = 0;
      }
    }
  }

  /** A line past `MAX_INDEXED_LINE_BYTES`: counted, not indexed; before any header, the file is no session. */
  private skipLine(row: SessionRow, result: CatchUpResult): void {
    result.largeLinesSkipped++;
    if (row.session_id === null) row.header_hash = "none";
  }

  private line(bytes: Buffer, offset: number, row: SessionRow, result: CatchUpResult, artifacts: ArtifactReader): void {
    const decoded = decodeLine(offset === 0 ? stripBom(bytes) : bytes);
    if (decoded.kind === "blank") return;
    if (decoded.kind === "malformed") {
      if (row.session_id === null) row.header_hash = "none";
      else result.malformedLines++;
      return;
    }
    const values = decoded.kind === "record" ? [decoded.value] : decoded.values;
    for (const record of values) {
      if (row.session_id === null) {
        if (record.type === "title" && row.offset === 0) continue;
        if (record.type !== "session" || typeof record.id !== "string") {
          row.header_hash = "none";
          return;
        }
        row.session_id = record.id;
        row.cwd = typeof record.cwd === "string" ? record.cwd : "";
        row.header_start = offset;
        row.header_len = bytes.length;
        row.header_hash = hashOf(bytes);
        continue;
      }
      this.entry(record, row, result, artifacts, offset, bytes.length);
    }
  }

  private entry(
    record: RawRecord,
    row: SessionRow,
    result: CatchUpResult,
    artifacts: ArtifactReader,
    offset: number,
    length: number,
  ): void {
    row.records++;
    const model = entryModel(record);
    if (model !== null) row.model = model;
    const texts = entryTexts(record);
    if (texts.length === 0) return;
    const entryId = typeof record.id === "string" && record.id.length > 0 ? record.id : deriveId(row.session_id!, row.records, new Set());
    const ts = typeof record.timestamp === "string" ? record.timestamp : "";
    const ms = ts === "" ? Number.NaN : Date.parse(ts);
    for (const text of texts) {
      const body = artifacts.withArtifacts(text, result);
      const ts_ms = Number.isNaN(ms) ? null : ms;
      const id = this.sql.insertEntry.run(row.sid, entryId, text.role, ts, ts_ms, row.model, offset, length).lastInsertRowid;
      insertSearchText(this.sql, id, body);
      result.entries++;
    }
  }
}
