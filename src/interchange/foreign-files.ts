import { lstatSync, readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { TranscriptStoreError } from "../errors.ts";
import type { InterchangeFormat } from "./foreign-entry.ts";

/** Where each agent keeps its transcripts (the walk when no path is given). */
export function defaultForeignTree(format: InterchangeFormat, env: NodeJS.ProcessEnv = process.env): string {
  const home = env.HOME ?? homedir();
  if (format === "claude-code") return join(env.CLAUDE_CONFIG_DIR ?? join(home, ".claude"), "projects");
  return join(env.CODEX_HOME ?? join(home, ".codex"), "sessions");
}

function walk(dir: string, out: string[]): void {
  const names = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const d of names) {
    const path = join(dir, d.name);
    // symbolic links are not followed (a link cycle, or a tree outside the one named)
    if (d.isDirectory()) walk(path, out);
    else if (d.isFile() && d.name.endsWith(".jsonl")) out.push(path);
  }
}

/**
 * The transcript files `paths` name: a file as it is, a directory walked for `*.jsonl` (sorted,
 * links inside not followed). A named path that is a link to a directory (a symlinked
 * `~/.claude/projects`) is the directory the user named: it is walked. `SESSION_NOT_FOUND` for a
 * path that does not exist.
 */
export function foreignFiles(paths: readonly string[], cwd: string = process.cwd()): string[] {
  const out: string[] = [];
  for (const p of paths) {
    const abs = resolve(cwd, p);
    let stat;
    try {
      stat = lstatSync(abs);
      // the root the user named is followed; links met inside the walk are not
      if (stat.isSymbolicLink()) stat = statSync(abs);
    } catch {
      throw new TranscriptStoreError("SESSION_NOT_FOUND", `no such file or directory: ${abs}`, { path: abs });
    }
    if (stat.isDirectory()) walk(abs, out);
    else out.push(abs);
  }
  return out;
}

/**
 * The files of a Claude Code transcript's `tool-results/` sidecar directory
 * (`<dir>/<session uuid>/tool-results/…`, where large tool outputs are written beside the
 * transcript), as `tool-results/<relative path>` names with their absolute paths. Empty when absent.
 */
export function claudeToolResultFiles(transcript: string): Array<{ name: string; path: string }> {
  const dir = join(dirname(transcript), basename(transcript).replace(/\.jsonl$/, ""), "tool-results");
  try {
    if (!lstatSync(dir).isDirectory()) return [];
  } catch {
    return [];
  }
  const files: string[] = [];
  const walkAll = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (e.isDirectory()) walkAll(join(d, e.name));
      else if (e.isFile()) files.push(join(d, e.name));
    }
  };
  walkAll(dir);
  return files.map((path) => ({ name: `tool-results/${relative(dir, path).split(sep).join("/")}`, path }));
}
