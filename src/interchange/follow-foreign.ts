import { type FSWatcher, statSync, watch } from "node:fs";
import { TranscriptStoreError } from "../errors.ts";
import type { InterchangeFormat } from "./foreign-entry.ts";
import { foreignFiles } from "./foreign-files.ts";
import { importForeignFile, type ForeignImportOptions, type ForeignImportReport } from "./import-foreign.ts";

/** Options of `followForeign`: the import's, and how to stop and hear of each change. */
export interface ForeignFollowOptions extends ForeignImportOptions {
  /** Stops the follow (between files); the promise then resolves. */
  signal: AbortSignal;
  /** Called with each file's report when it was imported (created, appended) or refused; `unchanged` is not reported. */
  onReport: (report: ForeignImportReport) => void;
  /** The longest wait between two looks when no change event came (a watcher can miss some). @default 1000 */
  intervalMs?: number;
}

/** What a file was when it was last imported: a change of any of these is a change of the file. */
interface Seen {
  size: number;
  mtimeMs: number;
  ino: number;
}

function statOf(path: string): Seen | null {
  try {
    const s = statSync(path);
    return { size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
  } catch {
    return null;
  }
}

const same = (a: Seen | undefined, b: Seen | null) =>
  a !== undefined && b !== null && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino;

/**
 * Keeps the store in step with an agent's transcripts while the agent runs (`import --from <agent>
 * --follow`): every file `paths` name (directories walked again at each look, so new sessions are
 * found) is imported once, then again each time its size, time or inode changes: a file that grew
 * is `appended`, one rewritten in its middle is refused (`IMPORT_CONFLICT`, reported, the store's
 * copy unchanged) and looked at again only when it changes again. A file is not read while its stat
 * is unchanged, so re-runs and idle looks write nothing. Each import goes through the storage seam
 * as one `importSnapshot`, so a kill at any point leaves the session as it was before or after that
 * import. Looks happen on a change event of the watched directories, else every `intervalMs`.
 * Resolves when `signal` aborts.
 */
export async function followForeign(format: InterchangeFormat, paths: readonly string[], options: ForeignFollowOptions): Promise<void> {
  const { signal, onReport, intervalMs = 1000, ...importOptions } = options;
  const seen = new Map<string, Seen>();
  let wake: (() => void) | null = null;
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const watchers: FSWatcher[] = [];
  for (const p of paths) {
    try {
      watchers.push(watch(p, { recursive: true, persistent: false }, poke));
    } catch {
      // a path that cannot be watched is still looked at every intervalMs
    }
  }
  signal.addEventListener("abort", poke, { once: true });
  try {
    while (!signal.aborted) {
      for (const file of filesNow(paths, importOptions.cwd)) {
        if (signal.aborted) break;
        const before = statOf(file);
        if (before === null || same(seen.get(file), before)) continue;
        let report: ForeignImportReport;
        try {
          report = await importForeignFile(format, file, importOptions);
        } catch (err) {
          if (!(err instanceof TranscriptStoreError)) throw err;
          report = refused(format, file, err);
        }
        seen.set(file, before);
        if (report.status !== "unchanged") onReport(report);
      }
      if (signal.aborted) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(poke, intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    for (const w of watchers) w.close();
  }
}

/** The files `paths` name now: none for a named path that is gone (it is looked at again later). */
function filesNow(paths: readonly string[], cwd: string | undefined): string[] {
  const out: string[] = [];
  for (const p of paths) {
    try {
      out.push(...foreignFiles([p], cwd));
    } catch (err) {
      if (!(err instanceof TranscriptStoreError)) throw err;
    }
  }
  return out;
}

/** The report of a file the store refused (a conflict, a lock): nothing written. */
export function refused(format: InterchangeFormat, path: string, err: TranscriptStoreError): ForeignImportReport {
  return {
    path,
    format,
    id: "",
    sourceId: null,
    status: "refused",
    location: null,
    entries: 0,
    artifacts: 0,
    counts: { records: 0, mapped: 0, kept: 0, damaged: 0 },
    problems: [],
    error: { code: err.code, message: err.message },
  };
}
