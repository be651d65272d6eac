import { join } from "node:path";
import { errnoCode, TranscriptStoreError, type StoreWarning } from "../errors.ts";
import { io } from "../io.ts";
import { listEntries, openGuarded, readGuarded, readHeadGuarded } from "./artifact-files.ts";
import { pageFile } from "./file-pages.ts";
import { pageLines, type LinePage, type LinePageOptions } from "./line-pages.ts";
import type { ArtifactCipher } from "./artifact-cipher.ts";
import { SEALED_OVERHEAD } from "./artifact-cipher.ts";
import { bytesToText } from "./artifact-values.ts";
import { ID_PREFIXED, isArtifactId, LOG_FILE, META_FILE, metaFileName } from "./artifact-names.ts";
import { decodeMeta, deriveMeta, logNameOf, summarize, SUMMARY_CHARS, type ArtifactMeta, type MetaState } from "./metadata.ts";

/** Bytes read from a content file to summarize it when its metadata has no summary. */
export const SUMMARY_HEAD_BYTES = SUMMARY_CHARS * 6;

/** An artifact found on disk. */
export interface Found {
  meta: ArtifactMeta;
  /** Size of the content file; null when it is not there (pending, removed). */
  size: number | null;
}

/**
 * The read side of an artifacts directory: lists it, reads metadata (remembering finished
 * records, which never change) and content, and derives metadata for content files that have
 * none. It always asks the directory, so files written by other processes are seen at once.
 */
export class ArtifactIndex {
  readonly dir: string;
  private readonly warn: (warning: StoreWarning) => void;
  private readonly metaCache = new Map<string, ArtifactMeta>();
  private readonly warned = new Set<string>();
  /** Ids carrying each name, ascending; built by one listing, then extended id by id. */
  private names: Map<string, number[]> | null = null;
  /** Every id below this has been read into `names` (except those still pending). */
  private frontier = 0;
  /** Ids claimed but not finished when last read: read again on the next name lookup. */
  private readonly pendingNames = new Set<number>();

  /** `cipher`: an encrypted session's (its content files are sealed, read back through it). */
  constructor(
    dir: string,
    warn: (warning: StoreWarning) => void,
    private readonly cipher: ArtifactCipher | null = null,
  ) {
    this.dir = dir;
    this.warn = warn;
  }

  /** Records metadata this process has just written. */
  remember(meta: ArtifactMeta): void {
    this.metaCache.set(meta.id, meta);
  }

  /** Drops what is known of an id (removed or released). */
  forget(id: string): void {
    this.metaCache.delete(id);
  }

  /** Absolute path of an artifact's content file. */
  logPath(meta: ArtifactMeta): string {
    return join(this.dir, logNameOf(meta));
  }

  /** The default summary, read from the head of the content file (for records without one). */
  summaryFromFile(meta: ArtifactMeta): string {
    if (this.cipher !== null) {
      let content: Buffer | null;
      try {
        content = this.readContent(meta);
      } catch (err) {
        // A listing reads leniently: a file that does not authenticate lists without a summary, reported.
        if (!(err instanceof TranscriptStoreError) || err.code !== "DECRYPT_FAILED") throw err;
        this.warnOnce(this.logPath(meta), { code: "DECRYPT_FAILED", message: err.message, path: this.logPath(meta) });
        return "";
      }
      return content === null ? "" : summarize(content.subarray(0, SUMMARY_HEAD_BYTES).toString("utf8"));
    }
    const head = this.guarded(this.logPath(meta), readHeadGuarded(this.logPath(meta), SUMMARY_HEAD_BYTES));
    return head === null ? "" : summarize(head.toString("utf8"));
  }

  /** The content bytes, or null when the file is gone (or is not a regular file). */
  readContent(meta: ArtifactMeta): Buffer | null {
    const path = this.logPath(meta);
    let bytes: Buffer | null;
    try {
      bytes = this.guarded(path, readGuarded(path));
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not read artifact ${meta.id}: ${(err as Error).message}`, {
        path,
        cause: err,
      });
    }
    // Sealed content is authenticated whole before any of it is served (`DECRYPT_FAILED` otherwise).
    return bytes === null || this.cipher === null ? bytes : this.cipher.open(logNameOf(meta), bytes, path);
  }

  /**
   * A page of the content's lines, read in chunks (memory bounded by the page); null when gone.
   * Sealed content is decrypted whole first (memory bounded by the artifact).
   */
  readPage(meta: ArtifactMeta, options: LinePageOptions): LinePage | null {
    if (this.cipher !== null) {
      const content = this.readContent(meta);
      return content === null ? null : pageLines(bytesToText(content, meta.id), options);
    }
    const path = this.logPath(meta);
    let fd: number | null | "unsafe";
    try {
      fd = openGuarded(path);
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not read artifact ${meta.id}: ${(err as Error).message}`, {
        path,
        cause: err,
      });
    }
    if (fd === null || fd === "unsafe") {
      this.guarded(path, fd);
      return null;
    }
    try {
      return pageFile(fd, options);
    } catch (err) {
      if (err instanceof TranscriptStoreError) throw err;
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not read artifact ${meta.id}: ${(err as Error).message}`, {
        path,
        cause: err,
      });
    } finally {
      io.closeSync(fd);
    }
  }

  /** A symlink or special file where content belongs is never followed: it reads as absent. */
  private guarded(path: string, result: Buffer | null | "unsafe"): Buffer | null {
    if (result !== "unsafe") return result;
    this.warnOnce(path, {
      code: "ARTIFACT_NOT_FOUND",
      message: "Not a regular file (symlink or special file) in the artifacts directory; ignored",
      path,
    });
    return null;
  }

  private warnOnce(key: string, warning: StoreWarning): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.warn(warning);
  }

  /** Highest id any artifact-namespace file in the directory carries; -1 when none. */
  scanMaxId(): number {
    let max = -1;
    for (const entry of listEntries(this.dir)) max = Math.max(max, idPrefixOf(entry.name));
    return max;
  }

  /** The artifact with this id, from its metadata or, lacking that, from its content file's name. */
  findById(id: string): Found | null {
    const state = this.metaState(id);
    if (state.kind === "meta") return { meta: state.meta, size: this.sizeOf(state.meta) };
    if (state.kind === "tombstone" || state.kind === "pending") return null;
    // No usable metadata: a content file written by another tool (or whose metadata was lost).
    for (const entry of listEntries(this.dir)) {
      const m = LOG_FILE.exec(entry.name);
      if (!m || m[1] !== id || !entry.isFile()) continue;
      const meta = this.derive(entry.name);
      if (meta !== null) return { meta, size: this.sizeOf(meta) };
    }
    return null;
  }

  /**
   * Newest artifact carrying the name whose content is present; if that one expired, the name
   * reads as absent (the caller checks expiry). The first lookup lists the directory once; later
   * ones only read the metadata of ids claimed since (ids are never reused, so a record once read
   * only ever turns into a tombstone), which keeps a lookup O(1) amortized per saved artifact.
   */
  findByName(name: string): Found | null {
    const ids = this.catchUpNames().get(name);
    if (ids === undefined) return null;
    for (let i = ids.length - 1; i >= 0; i--) {
      const found = this.findById(String(ids[i]));
      if (found !== null && found.meta.name === name && found.size !== null) return found;
    }
    return null;
  }

  private catchUpNames(): Map<string, number[]> {
    if (this.names === null) {
      this.names = new Map();
      let max = -1;
      const metaIds: number[] = [];
      for (const entry of listEntries(this.dir)) {
        const m = META_FILE.exec(entry.name);
        if (m && isArtifactId(m[1]!) && String(Number(m[1])) === m[1]) metaIds.push(Number(m[1]));
        max = Math.max(max, idPrefixOf(entry.name));
      }
      for (const id of metaIds.sort((a, b) => a - b)) this.indexName(id);
      this.frontier = max + 1;
    }
    for (const id of [...this.pendingNames]) {
      this.pendingNames.delete(id);
      this.indexName(id);
    }
    // Ids are claimed in ascending order by every process: read on until the first free name.
    for (;;) {
      const state = this.indexName(this.frontier);
      if (state === "free") break;
      this.frontier++;
    }
    return this.names;
  }

  /** Reads one id's metadata into the name index; "free" when nothing at all carries its name. */
  private indexName(id: number): "free" | "read" {
    const key = String(id);
    const state = this.metaState(key);
    if (state.kind === "meta" && state.meta.name !== undefined) {
      const ids = this.names!.get(state.meta.name);
      if (ids === undefined) this.names!.set(state.meta.name, [id]);
      else if (ids[ids.length - 1]! < id) ids.push(id);
      else if (!ids.includes(id))
        ids.splice(
          ids.findIndex((x) => x > id),
          0,
          id,
        );
    }
    if (state.kind === "pending") this.pendingNames.add(id);
    if (state.kind !== "missing") return "read";
    // A symlink or other non-file planted at the name is skipped, like a taken id.
    return io.lstatSync(join(this.dir, metaFileName(key)), { throwIfNoEntry: false }) === undefined ? "free" : "read";
  }

  private sizeOf(meta: ArtifactMeta): number | null {
    try {
      const st = io.lstatSync(this.logPath(meta));
      if (!st.isFile()) return null;
      return this.cipher === null ? st.size : Math.max(0, st.size - SEALED_OVERHEAD);
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return null;
      throw err;
    }
  }

  private derive(logName: string): ArtifactMeta | null {
    try {
      return deriveMeta(logName, io.lstatSync(join(this.dir, logName)).mtimeMs);
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return null;
      throw err;
    }
  }

  private metaState(id: string): MetaState {
    const cached = this.metaCache.get(id);
    if (cached) return { kind: "meta", meta: cached };
    const path = join(this.dir, metaFileName(id));
    const bytes = readGuarded(path);
    if (bytes === null) return { kind: "missing" };
    if (bytes === "unsafe") {
      this.guarded(path, bytes);
      return { kind: "missing" };
    }
    const state = decodeMeta(bytes, id);
    if (state.kind === "meta") this.metaCache.set(id, state.meta);
    if (state.kind === "corrupt")
      this.warnOnce(path, { code: "MALFORMED_LINES", message: `Artifact metadata ignored: ${state.reason}`, path });
    return state;
  }

  /** One directory listing: every artifact that has a content file, and its metadata, by ascending id. */
  scan(): Found[] {
    const logs = new Map<string, string[]>();
    for (const entry of listEntries(this.dir)) {
      const m = LOG_FILE.exec(entry.name);
      if (!m || !entry.isFile()) continue;
      const names = logs.get(m[1]!);
      if (names) names.push(entry.name);
      else logs.set(m[1]!, [entry.name]);
    }
    const found: Found[] = [];
    for (const [id, names] of logs) {
      if (!isArtifactId(id) || String(Number(id)) !== id) continue;
      const state = this.metaState(id);
      if (state.kind === "tombstone" || state.kind === "pending") continue;
      let meta: ArtifactMeta | null = state.kind === "meta" && names.includes(logNameOf(state.meta)) ? state.meta : null;
      if (meta === null && state.kind !== "meta") meta = this.derive(names[0]!);
      if (meta === null) continue;
      const size = this.sizeOf(meta);
      if (size !== null) found.push({ meta, size });
    }
    return found.sort((a, b) => Number(a.meta.id) - Number(b.meta.id));
  }
}

/** The artifact id a file name starts with (content, metadata, tombstone, another tool's file); -1 for none. */
function idPrefixOf(name: string): number {
  // Agent outputs (`<id>.md`, subagent `.jsonl` sidecars) are their own namespace: a subagent
  // named "3" must not push artifact ids past 3.
  if (name.endsWith(".md") || name.endsWith(".jsonl")) return -1;
  const m = ID_PREFIXED.exec(name);
  return m && isArtifactId(m[1]!) ? Number(m[1]) : -1;
}
