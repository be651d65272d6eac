import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { TranscriptStoreError } from "../errors.ts";
import { resolveSessionManagerOptions, type SessionManagerOptions } from "../session/session-options.ts";
import { backendOf } from "../storage/backends.ts";
import { snapshotOfEntries, type ImportStatus } from "../storage/session-snapshot.ts";
import { buildForeignSession, staleTornEntries, type ForeignCounts, type ForeignProblem } from "./build-foreign-session.ts";
import { SessionManager } from "../session/session-manager.ts";
import { ClaudeCodeMapper } from "./claude-code-mapper.ts";
import { CodexMapper } from "./codex-mapper.ts";
import { FOREIGN_FIELD, type InterchangeFormat } from "./foreign-entry.ts";
import type { SessionEntry } from "../format/types.ts";
import { truncateStrings } from "../prepare/truncate-strings.ts";
import { stripTransientFields } from "../prepare/strip-transient-fields.ts";
import type { ResolvedPrepareOptions } from "../prepare/pipeline.ts";
import { claudeToolResultFiles, foreignFiles } from "./foreign-files.ts";
import { readForeignLines } from "./foreign-lines.ts";
import type { ForeignMapper } from "./foreign-mapper.ts";

/** Options of `importClaudeCode` / `importCodex`: where to store (as for SessionManager), and `dryRun`. */
export interface ForeignImportOptions extends SessionManagerOptions {
  /** Read and map, report, write nothing. @default false */
  dryRun?: boolean;
  /** Relative paths resolve against it. @default process.cwd() */
  cwd?: string;
}

/** What became of one source file. */
export interface ForeignImportReport {
  path: string;
  format: InterchangeFormat;
  /** The session's id in the store (derived from the source's id). */
  id: string;
  /** The source's own session id, or null (then the file name was the key). */
  sourceId: string | null;
  /** `dry-run`: nothing written; `refused`: see `error`, nothing written. */
  status: ImportStatus | "dry-run" | "refused";
  /** Where the session lives (null for a dry run or a refusal). */
  location: string | null;
  entries: number;
  /** Sidecar files carried as the session's artifacts (Claude Code's `tool-results/`). */
  artifacts: number;
  counts: ForeignCounts;
  problems: ForeignProblem[];
  error?: { code: string; message: string };
}

/** The mapper of each format: the one table import dispatches on. */
export const FOREIGN_MAPPERS: Record<InterchangeFormat, (fileStem: string) => ForeignMapper> = {
  "claude-code": (fileStem) => new ClaudeCodeMapper(fileStem),
  codex: () => new CodexMapper(),
};

const NAMES: Record<InterchangeFormat, string> = { "claude-code": "a Claude Code transcript", codex: "a Codex rollout" };

/**
 * Imports one source file into the store through the storage seam (`importSnapshot`): created,
 * `unchanged` when the same source was imported before, `appended` when it has grown since. The file
 * is read line by line. A store refusal (`IMPORT_CONFLICT`, `SESSION_LOCKED`) is thrown.
 */
export async function importForeignFile(
  format: InterchangeFormat,
  path: string,
  options: ForeignImportOptions = {},
): Promise<ForeignImportReport> {
  const resolved = resolveSessionManagerOptions({ ...options, rehydrate: "lazy" });
  const stem = basename(path).replace(/\.jsonl$/, "");
  const build = (storedTorn?: Map<number, SessionEntry[]>) =>
    buildForeignSession(readForeignLines(path), FOREIGN_MAPPERS[format](stem), { fallbackKey: stem, storedTorn });
  let built = await build();
  // A last line torn at an earlier import (a transcript being written) is carried again as the store holds it.
  const storedTorn = await storedTornOf(built.header.id, options);
  if (storedTorn.size > 0) built = await build(storedTorn);
  const sidecars = format === "claude-code" ? claudeToolResultFiles(path) : [];
  const report: ForeignImportReport = {
    path,
    format,
    id: built.header.id,
    sourceId: built.sourceId,
    status: "dry-run",
    location: null,
    entries: built.entries.length,
    artifacts: sidecars.length,
    counts: built.counts,
    problems: built.problems,
  };
  if (built.unrecognized) {
    const error = new TranscriptStoreError("BAD_HEADER", `${path}: no line has the shape of ${NAMES[format]}; nothing imported`, { path });
    return { ...report, status: "refused", error: { code: error.code, message: error.message } };
  }
  if (options.dryRun === true) return report;
  // The source record is kept whole (lossless); only what the model sees is cut at the store's limit
  // and loses the transient keys. Images are moved to the blob store in both.
  const entries = built.entries.map((e) => cutMapped(e, resolved.prepare));
  const prepare = { ...resolved.prepare, maxStringChars: Number.MAX_SAFE_INTEGER, transientKeys: new Set<string>(), transientMarkers: [] };
  const snapshot = {
    ...snapshotOfEntries(built.header, entries, prepare, { warn: resolved.onWarning }),
    artifacts: async function* () {
      for (const s of sidecars) yield { name: s.name, bytes: readFileSync(s.path) };
    },
  };
  const done = await backendOf(resolved).importSnapshot(snapshot, resolved);
  return { ...report, status: done.status, location: done.location };
}

/** The torn-line entries of the stored session `id`, by source line (empty when the store has no such session). */
async function storedTornOf(id: string, options: ForeignImportOptions): Promise<Map<number, SessionEntry[]>> {
  const resolved = resolveSessionManagerOptions({ ...options, onWarning: options.onWarning ?? (() => {}) });
  const ref = await backendOf(resolved).locate(id, resolved);
  if (ref === null) return new Map();
  const m = await SessionManager.open(ref, { ...options, readOnly: true, rehydrate: "lazy" });
  try {
    return staleTornEntries(m.getEntries().map((e) => m.storage.asStored(e)));
  } finally {
    await m.close();
  }
}

/** The entry with its long strings cut and transient keys removed (the prepare pipeline's rules), its `foreign` field untouched. */
function cutMapped(entry: SessionEntry, prepare: ResolvedPrepareOptions): SessionEntry {
  const { [FOREIGN_FIELD]: foreign, ...rest } = entry;
  const cut = truncateStrings(stripTransientFields(rest, prepare.transientKeys), prepare.maxStringChars);
  return cut === rest ? entry : { ...cut, [FOREIGN_FIELD]: foreign };
}

/** Imports every file `paths` name (directories walked for `*.jsonl`), one report per file. */
export async function importForeign(
  format: InterchangeFormat,
  paths: readonly string[],
  options: ForeignImportOptions = {},
): Promise<ForeignImportReport[]> {
  const reports: ForeignImportReport[] = [];
  for (const file of foreignFiles(paths, options.cwd)) reports.push(await importForeignFile(format, file, options));
  return reports;
}

/** Imports Claude Code transcripts (`~/.claude/projects/<slug>/<uuid>.jsonl`, subagent files included). */
export function importClaudeCode(paths: string | readonly string[], options: ForeignImportOptions = {}): Promise<ForeignImportReport[]> {
  return importForeign("claude-code", typeof paths === "string" ? [paths] : paths, options);
}

/** Imports Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), both formats. */
export function importCodex(paths: string | readonly string[], options: ForeignImportOptions = {}): Promise<ForeignImportReport[]> {
  return importForeign("codex", typeof paths === "string" ? [paths] : paths, options);
}
