import { isRecord } from "./types.ts";

/** Transcript formats of other agents that a user may hand us for a pi/omp session. */
export type ForeignFormat = "claude-code" | "codex";

/** Records of a file without a session header looked at to recognize another agent's format. */
export const FOREIGN_PROBE_RECORDS = 8;

const CLAUDE_CODE_TYPES = new Set(["user", "assistant", "summary", "system"]);
const CODEX_TYPES = new Set(["session_meta", "response_item", "event_msg", "turn_context", "compacted"]);

/**
 * The agent whose transcript `record` is a line of, by its shape: Claude Code's records carry
 * `uuid`, `parentUuid` and `sessionId` (or, for a `summary`, a `leafUuid`); Codex rollouts are
 * `{timestamp, type, payload}` with `session_meta`, `response_item`, … types. Null otherwise.
 */
export function foreignFormatOf(record: unknown): ForeignFormat | null {
  if (!isRecord(record) || typeof record.type !== "string") return null;
  const { type } = record;
  if (type === "summary" && typeof record.leafUuid === "string") return "claude-code";
  if (CLAUDE_CODE_TYPES.has(type) && typeof record.uuid === "string" && "parentUuid" in record && typeof record.sessionId === "string")
    return "claude-code";
  if (CODEX_TYPES.has(type) && typeof record.timestamp === "string" && isRecord(record.payload)) return "codex";
  return null;
}

/** What the file is and the way forward, for a header problem. */
export function foreignFormatHint(format: ForeignFormat): string {
  return format === "claude-code"
    ? "this looks like a Claude Code transcript (~/.claude/projects/…), not a pi/omp session; " +
        "import it with `transcript-store import --from claude-code <file>`, or resume it with Claude Code (`claude --resume`)"
    : "this looks like a Codex rollout (~/.codex/sessions/…), not a pi/omp session; " +
        "import it with `transcript-store import --from codex <file>`, or resume it with Codex (`codex resume`)";
}
