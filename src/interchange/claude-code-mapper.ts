import { isRecord, type RawRecord } from "../format/types.ts";
import { foreignFormatOf } from "../format/foreign-format.ts";
import { derivedSessionId, keptDraft, millisOf, SUBAGENT_FIELD, type EntryDraft, type MappedLine } from "./foreign-entry.ts";
import type { ForeignMapper, ForeignParent, Placement } from "./foreign-mapper.ts";

/** Claude Code record types kept whole as `custom` entries (not sent to the model). */
const KEPT_TYPES = new Set([
  "summary",
  "system",
  "file-history-snapshot",
  "progress",
  "queue-operation",
  "custom-title",
  "ai-title",
  "agent-name",
  "tag",
  "last-prompt",
  "pr-link",
  "attachment",
  "permission-mode",
  "worktree-state",
  // written by Claude Code 2.1.332 (seen in its own transcripts, test/interchange/real-agents.test.ts)
  "api-request",
  "api-request-blob",
  "api-request-shape",
  "atis-latch",
  "cost-state",
  "mode",
  "tools-used",
  // ours: an entry a conversion to Claude Code could not express (to-claude-code.ts)
  "transcript-store",
]);

/** A Claude content block in our (pi) block shape; unknown blocks pass as they are. */
function block(b: unknown): unknown {
  if (!isRecord(b)) return { type: "text", text: String(b) };
  if (b.type === "image" && isRecord(b.source) && b.source.type === "base64") {
    return { type: "image", data: b.source.data, mimeType: b.source.media_type };
  }
  if (b.type === "thinking") return { type: "thinking", thinking: b.thinking, thinkingSignature: b.signature };
  if (b.type === "redacted_thinking") return { type: "thinking", thinking: "", thinkingSignature: b.data, redacted: true };
  if (b.type === "tool_use" || b.type === "server_tool_use") return { type: "toolCall", id: b.id, name: b.name, arguments: b.input };
  return b;
}

function blocks(content: unknown): unknown[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.map(block) : [];
}

/**
 * Claude Code transcripts (`~/.claude/projects/<slug>/<uuid>.jsonl`): `user` and `assistant`
 * records become messages (a `tool_result` block its own `toolResult` message), the `uuid` /
 * `parentUuid` tree becomes the entry tree (a compact boundary, `parentUuid: null`, starts a new
 * root, so the context after it begins at the summary); every other record is kept whole.
 */
export class ClaudeCodeMapper implements ForeignMapper {
  readonly format = "claude-code" as const;
  private readonly byUuid = new Map<string, number>();
  private readonly toolNames = new Map<string, string>();
  private readonly usageSeen = new Set<string>();
  private session: string | null = null;
  private agent: string | null = null;
  private dir: string | null = null;
  private sidechain = false;

  /** `fileStem`: the file's name without `.jsonl` (a subagent file shares its session's id). */
  constructor(private readonly fileStem: string | null = null) {}

  recognizes(value: unknown): boolean {
    return foreignFormatOf(value) === "claude-code";
  }

  sourceId(): string | null {
    if (this.session === null) return null;
    if (this.agent !== null) return `${this.session}:agent-${this.agent}`;
    // a file named other than its session (an agent file of a version without agentId) is a session of its own
    return this.fileStem === null || this.fileStem === this.session ? this.session : `${this.session}:${this.fileStem}`;
  }

  cwd(): string | null {
    return this.dir;
  }

  /** A subagent's transcript (sidechain records in a file of its own): its parent is the session its records name. */
  parent(): ForeignParent | null {
    if (this.session === null || !this.sidechain || this.sourceId() === this.session) return null;
    return this.agent === null ? { sessionId: this.session } : { sessionId: this.session, agentId: this.agent };
  }

  placement(value: unknown): Placement {
    if (!isRecord(value) || typeof value.uuid !== "string" || !("parentUuid" in value)) return "previous";
    if (value.parentUuid === null) return "root";
    const parent = typeof value.parentUuid === "string" ? this.byUuid.get(value.parentUuid) : undefined;
    return parent === undefined ? "previous" : { under: parent };
  }

  placed(value: unknown, index: number): void {
    if (isRecord(value) && typeof value.uuid === "string" && !this.byUuid.has(value.uuid)) this.byUuid.set(value.uuid, index);
  }

  map(value: unknown): MappedLine {
    if (!isRecord(value) || typeof value.type !== "string") {
      return {
        drafts: [keptDraft(this.format, "value")],
        outcome: "kept",
        problem: { code: "NOT_A_RECORD", reason: "not an object with a type" },
      };
    }
    this.learn(value);
    const { type } = value;
    if ((type === "user" || type === "assistant") && isRecord(value.message)) {
      const drafts = type === "user" ? this.user(value) : this.assistant(value);
      if (drafts.length > 0) return { drafts, outcome: "mapped" };
    }
    if (KEPT_TYPES.has(type) || type === "user" || type === "assistant") return { drafts: [keptDraft(this.format, type)], outcome: "kept" };
    return {
      drafts: [keptDraft(this.format, type)],
      outcome: "kept",
      problem: { code: "UNKNOWN_RECORD_TYPE", reason: `unknown Claude Code record type ${JSON.stringify(type)}` },
    };
  }

  private learn(r: RawRecord): void {
    if (this.session === null && typeof r.sessionId === "string") this.session = r.sessionId;
    if (this.agent === null && typeof r.agentId === "string") this.agent = r.agentId;
    if (this.dir === null && typeof r.cwd === "string") this.dir = r.cwd;
    if (r.isSidechain === true) this.sidechain = true;
  }

  private user(r: RawRecord): EntryDraft[] {
    const message = r.message as RawRecord;
    const timestamp = millisOf(r.timestamp);
    if (!Array.isArray(message.content)) {
      return [{ type: "message", message: { role: "user", content: message.content ?? "", timestamp } }];
    }
    const drafts: EntryDraft[] = [];
    let pending: unknown[] = [];
    const flush = () => {
      if (pending.length > 0) drafts.push({ type: "message", message: { role: "user", content: pending, timestamp } });
      pending = [];
    };
    for (const b of message.content) {
      if (isRecord(b) && b.type === "tool_result") {
        flush();
        const id = String(b.tool_use_id);
        drafts.push({
          type: "message",
          message: {
            role: "toolResult",
            toolCallId: id,
            toolName: this.toolNames.get(id) ?? "",
            content: blocks(b.content),
            isError: b.is_error === true,
            timestamp,
          },
        });
      } else pending.push(block(b));
    }
    flush();
    // a Task/Agent tool's result names the subagent it ran (`toolUseResult.agentId`): its transcript imports as that session
    const spawned = isRecord(r.toolUseResult) ? r.toolUseResult.agentId : undefined;
    const result = drafts.find((d) => (d.message as RawRecord).role === "toolResult");
    if (typeof spawned === "string" && this.session !== null && result !== undefined) {
      const session = derivedSessionId(this.format, `${this.session}:agent-${spawned}`);
      result[SUBAGENT_FIELD] = { session, toolCallId: (result.message as RawRecord).toolCallId };
    }
    return drafts;
  }

  private assistant(r: RawRecord): EntryDraft[] {
    const m = r.message as RawRecord;
    const content = blocks(m.content);
    for (const b of content) if (isRecord(b) && b.type === "toolCall") this.toolNames.set(String(b.id), String(b.name));
    const message: RawRecord = { role: "assistant", content, provider: "anthropic", model: m.model, timestamp: millisOf(r.timestamp) };
    if (typeof m.stop_reason === "string") message.stopReason = m.stop_reason;
    // Claude Code writes one record per content block of a response, each with the response's usage: count it once.
    const key = typeof m.id === "string" ? m.id : null;
    if (isRecord(m.usage) && (key === null || !this.usageSeen.has(key))) {
      if (key !== null) this.usageSeen.add(key);
      const u = m.usage;
      const n = (v: unknown) => (typeof v === "number" ? v : 0);
      const usage = {
        input: n(u.input_tokens),
        output: n(u.output_tokens),
        cacheRead: n(u.cache_read_input_tokens),
        cacheWrite: n(u.cache_creation_input_tokens),
        totalTokens: 0,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      };
      usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
      message.usage = usage;
    }
    return [{ type: "message", message }];
  }
}
