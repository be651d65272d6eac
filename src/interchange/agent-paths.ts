import { join } from "node:path";
import { isRecord } from "../format/types.ts";
import type { InterchangeFormat } from "./foreign-entry.ts";
import { defaultForeignTree } from "./foreign-files.ts";

/** Claude Code's project directory name for a cwd: every character that is not an ASCII letter or digit becomes `-`. */
export function claudeProjectSlug(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, "-");
}

/** A Codex rollout's name part for a time: `YYYY-MM-DDTHH-MM-SS` (UTC), and its `YYYY/MM/DD` directory. */
function codexTime(iso: string): { stamp: string; dir: string[] } {
  const t = new Date(iso);
  const d = Number.isNaN(t.getTime()) ? new Date(0) : t;
  const text = d.toISOString().slice(0, 19).replace(/:/g, "-");
  return { stamp: text, dir: [text.slice(0, 4), text.slice(5, 7), text.slice(8, 10)] };
}

/**
 * Where the agent looks for the transcript whose records are `records` (an export's, in order), so
 * that it resumes it: Claude Code `<$CLAUDE_CONFIG_DIR or ~/.claude>/projects/<cwd slug>/<sessionId>.jsonl`
 * (a sidechain with an `agentId`: `<slug>/<sessionId>/subagents/agent-<agentId>.jsonl`), which is
 * where `claude --resume <sessionId>` run in that cwd reads it; Codex
 * `<$CODEX_HOME or ~/.codex>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` from its `session_meta`
 * (`codex resume <id>` finds a rollout by the id in its name). Null when the records name no session.
 */
export function agentFilePath(format: InterchangeFormat, records: Iterable<unknown>, env: NodeJS.ProcessEnv): string | null {
  const tree = defaultForeignTree(format, env);
  for (const r of records) {
    if (!isRecord(r)) continue;
    if (format === "claude-code") {
      if (typeof r.sessionId !== "string" || typeof r.cwd !== "string" || typeof r.uuid !== "string") continue;
      const project = join(tree, claudeProjectSlug(r.cwd));
      if (r.isSidechain === true && typeof r.agentId === "string")
        return join(project, r.sessionId, "subagents", `agent-${r.agentId}.jsonl`);
      return join(project, `${r.sessionId}.jsonl`);
    }
    const meta = r.type === "session_meta" && isRecord(r.payload) ? r.payload : null;
    if (meta === null || typeof meta.id !== "string") continue;
    const at = typeof meta.timestamp === "string" ? meta.timestamp : typeof r.timestamp === "string" ? r.timestamp : "";
    const { stamp, dir } = codexTime(at);
    return join(tree, ...dir, `rollout-${stamp}-${meta.id}.jsonl`);
  }
  return null;
}
