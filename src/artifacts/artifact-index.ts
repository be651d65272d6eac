import { join } from "node:path";
import { errnoCode, TranscriptStoreError, type StoreWarning } from "../errors.ts";
import { io } from "../io.ts";
import { listEntries, readGuarded, readHeadGuarded } from "./artifact-files.ts";
import { ID_PREFIXED, isArtifactId, LOG_FILE, metaFileName } from "./artifact-names.ts";
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

  constructor(dir: string, warn: (warning: StoreWarning) => void) {
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
    const head = this.guarded(this.logPath(meta), readHeadGuarded(this.logPath(meta), SUMMARY_HEAD_BYTES));
    return head === null ? "" : summarize(head.toString("utf8"));
  }

  /** The content bytes, or null when the file is gone (or is not a regular file). */
  readContent(meta: ArtifactMeta): Buffer | null {
    const path = this.logPath(meta);
    try {
      return this.guarded(path, readGuarded(path));
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not read artifact ${meta.id}: ${(err as Error).message}`, { path, cause: err });
    }
  }

  /** A symlink or special file where content belongs is never followed: it reads as absent. */
  private guarded(path: string, result: Buffer | null | "unsafe"): Buffer | null {
    if (result !== "unsafe") return result;
    this.warnOnce(path, { code: "ARTIFACT_NOT_FOUND", message: "Not a regular file (symlink or special file) in the artifacts directory; ignored", path });
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
    for (const entry of listEntries(this.dir)) {
      // Agent outputs (`<id>.md`, subagent `.jsonl` sidecars) are their own namespace: a
      // subagent named "3" must not push artifact ids past 3.
      if (entry.name.endsWith(".md") || entry.name.endsWith(".jsonl")) continue;
      const m = ID_PREFIXED.exec(entry.name);
      if (m && isArtifactId(m[1]!)) max = Math.max(max, Number(m[1]));
    }
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

  /** Newest artifact carrying the name; if that one expired, the name reads as absent. */
  findByName(name: string): Found | null {
    let best: Found | null = null;
    for (const f of this.scan()) {
      if (f.meta.name === name && f.size !== null && (best === null || Number(f.meta.id) > Number(best.meta.id))) best = f;
    }
    return best;
  }

  private sizeOf(meta: ArtifactMeta): number | null {
    try {
      const st = io.lstatSync(this.logPath(meta));
      return st.isFile() ? st.size : null;
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
    if (state.kind === "corrupt") this.warnOnce(path, { code: "MALFORMED_LINES", message: `Artifact metadata ignored: ${state.reason}`, path });
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
