import { statSync } from "node:fs";
import { basename } from "node:path";
import { TranscriptStoreError } from "../errors.ts";
import { resolveSessionManagerOptions, type SessionManagerOptions } from "../session/session-options.ts";
import { backendOf } from "../storage/backends.ts";
import type { ImportStatus } from "../storage/session-snapshot.ts";
import {
  buildForeignEntries,
  scanForeignSession,
  staleTornEntries,
  type ForeignCounts,
  type ForeignProblem,
} from "./build-foreign-session.ts";
import { foreignSnapshot } from "./foreign-snapshot.ts";
import { fileBytes } from "../storage/session-file-lines.ts";
import { SessionManager } from "../session/session-manager.ts";
import { ClaudeCodeMapper } from "./claude-code-mapper.ts";
import { CodexMapper } from "./codex-mapper.ts";
import type { InterchangeFormat } from "./foreign-entry.ts";
import type { SessionEntry } from "../format/types.ts";
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
  const mapper = () => FOREIGN_MAPPERS[format](stem);
  // every pass reads the bytes there are now: a transcript being written gives each pass the same lines
  const size = statSync(path).size;
  const read = () => readForeignLines(path, size);
  const scan = await scanForeignSession(read(), mapper(), { fallbackKey: stem });
  const sidecars = format === "claude-code" ? claudeToolResultFiles(path) : [];
  const report: ForeignImportReport = {
    path,
    format,
    id: scan.header.id,
    sourceId: scan.sourceId,
    status: "dry-run",
    location: null,
    entries: scan.entries,
    artifacts: sidecars.length,
    counts: scan.counts,
    problems: scan.problems,
  };
  if (scan.unrecognized) {
    const error = new TranscriptStoreError("BAD_HEADER", `${path}: no line has the shape of ${NAMES[format]}; nothing imported`, { path });
    return { ...report, status: "refused", error: { code: error.code, message: error.message } };
  }
  if (options.dryRun === true) return report;
  // A last line torn at an earlier import (a transcript being written) is carried again as the store holds it.
  const storedTorn = await storedTornOf(scan.header.id, options);
  const entries = () => buildForeignEntries(read(), mapper(), scan.header, { fallbackKey: stem, storedTorn });
  const snapshot = foreignSnapshot(scan.header, entries, resolved.prepare, {
    warn: resolved.onWarning,
    artifacts: async function* () {
      for (const s of sidecars) yield { name: s.name, ...fileBytes(s.path) };
    },
  });
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
