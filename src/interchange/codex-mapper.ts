import { isRecord, type RawRecord } from "../format/types.ts";
import { derivedSessionId, keptDraft, millisOf, SUBAGENT_FIELD, type EntryDraft, type MappedLine } from "./foreign-entry.ts";
import type { ForeignMapper, ForeignParent, Placement } from "./foreign-mapper.ts";

/** Codex rollout line types (the enveloped format, `{timestamp, type, payload}`). */
const ENVELOPE_TYPES = new Set(["session_meta", "response_item", "event_msg", "turn_context", "compacted"]);

/** Enveloped line types newer Codex versions write that carry nothing to map (0.171.0: kept whole, no problem). */
const KEPT_ENVELOPE_TYPES = new Set(["world_state", "token_usage_record"]);

/** Response item types (also bare lines in the pre-envelope format). */
const ITEM_TYPES = new Set([
  "message",
  "reasoning",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "local_shell_call",
  "web_search_call",
  "image_generation_call",
  "compaction",
  "ghost_snapshot",
  "other",
]);

/** An OpenAI content item in our (pi) block shape. */
function block(c: unknown): unknown {
  if (!isRecord(c)) return { type: "text", text: String(c) };
  if (c.type === "input_text" || c.type === "output_text") return { type: "text", text: c.text };
  if (c.type === "input_image" && typeof c.image_url === "string") {
    const m = /^data:(image\/[^;,]+);base64,(.*)$/s.exec(c.image_url);
    return m ? { type: "image", data: m[2], mimeType: m[1] } : { type: "text", text: `[image: ${c.image_url}]` };
  }
  return c;
}

/** The text of a tool output: a string, `{content}`, or content items. */
function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (isRecord(output) && typeof output.content === "string") return output.content;
  if (Array.isArray(output)) return output.map((c) => (isRecord(c) && typeof c.text === "string" ? c.text : "")).join("");
  return JSON.stringify(output ?? null);
}

function parseArguments(args: unknown): unknown {
  if (typeof args !== "string") return args;
  try {
    return JSON.parse(args);
  } catch {
    return { raw: args };
  }
}

/**
 * Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), enveloped (`session_meta`,
 * `response_item`, `event_msg`, `turn_context`, `compacted`) and pre-envelope (a bare meta line,
 * `{"record_type":"state"}`, bare response items). Messages, reasoning, tool calls and outputs are
 * mapped; `compacted` becomes a compaction that keeps nothing before it (its message the summary);
 * everything else is kept whole. The entries form one chain in file order.
 */
export class CodexMapper implements ForeignMapper {
  readonly format = "codex" as const;
  private id: string | null = null;
  private dir: string | null = null;
  private spawnedBy: ForeignParent | null = null;
  private model: unknown = undefined;
  private provider: unknown = "openai";
  private readonly toolNames = new Map<string, string>();
  private lastTimestamp: number | undefined;
  /**
   * The prompt texts seen since the last model output: a prompt is in a rollout as a `response_item`
   * user message, as an `event_msg` `user_message`, or (as most versions write) both; the second of a
   * pair is kept whole rather than sent twice.
   */
  private promptItems: string[] = [];
  private promptEvents: string[] = [];

  recognizes(value: unknown): boolean {
    if (!isRecord(value)) return false;
    if (typeof value.type === "string" && ENVELOPE_TYPES.has(value.type) && isRecord(value.payload)) return true;
    if (typeof value.type === "string" && KEPT_ENVELOPE_TYPES.has(value.type) && isRecord(value.payload)) return true;
    if (typeof value.record_type === "string") return true;
    return typeof value.type === "string" && ITEM_TYPES.has(value.type);
  }

  sourceId(): string | null {
    return this.id;
  }

  cwd(): string | null {
    return this.dir;
  }

  parent(): ForeignParent | null {
    return this.spawnedBy;
  }

  placement(): Placement {
    return "previous";
  }

  placed(): void {}

  map(value: unknown): MappedLine {
    if (!isRecord(value)) {
      return { drafts: [keptDraft(this.format, "value")], outcome: "kept", problem: { code: "NOT_A_RECORD", reason: "not an object" } };
    }
    const ms = millisOf(value.timestamp);
    if (ms !== undefined) this.lastTimestamp = ms;
    if (typeof value.type === "string" && ENVELOPE_TYPES.has(value.type) && isRecord(value.payload)) return this.enveloped(value);
    if (typeof value.type === "string" && KEPT_ENVELOPE_TYPES.has(value.type) && isRecord(value.payload))
      return { drafts: [keptDraft(this.format, value.type)], outcome: "kept" };
    if (value.type === undefined && typeof value.record_type === "string")
      return { drafts: [keptDraft(this.format, "state")], outcome: "kept" };
    if (value.type === undefined && typeof value.id === "string" && typeof value.timestamp === "string") {
      this.meta(value);
      return { drafts: [keptDraft(this.format, "session_meta")], outcome: "kept" };
    }
    if (typeof value.type === "string" && ITEM_TYPES.has(value.type)) return this.item(value);
    return {
      drafts: [keptDraft(this.format, typeof value.type === "string" ? value.type : "value")],
      outcome: "kept",
      problem: { code: "UNKNOWN_RECORD_TYPE", reason: `unknown Codex record type ${JSON.stringify(value.type ?? null)}` },
    };
  }

  private meta(p: RawRecord): void {
    if (this.id === null && typeof p.id === "string") this.id = p.id;
    if (this.dir === null && typeof p.cwd === "string") this.dir = p.cwd;
    if (typeof p.model_provider === "string") this.provider = p.model_provider;
    // a sub-agent's rollout: `source: {subagent: {thread_spawn: {parent_thread_id, depth, agent_role, …}}}`
    const source = isRecord(p.source) && isRecord(p.source.subagent) ? p.source.subagent : null;
    const spawn = source !== null && isRecord(source.thread_spawn) ? source.thread_spawn : null;
    if (this.spawnedBy === null && spawn !== null && typeof spawn.parent_thread_id === "string") {
      const { parent_thread_id, ...rest } = spawn;
      this.spawnedBy = { sessionId: parent_thread_id, ...rest };
    }
  }

  private enveloped(r: RawRecord): MappedLine {
    const payload = r.payload as RawRecord;
    switch (r.type) {
      case "session_meta":
        this.meta(isRecord(payload.meta) ? payload.meta : payload);
        return { drafts: [keptDraft(this.format, "session_meta")], outcome: "kept" };
      case "event_msg":
        if (payload.type === "user_message" && typeof payload.message === "string") return this.promptEvent(payload);
        if (payload.type === "collab_agent_spawn_end" && typeof payload.new_thread_id === "string") {
          // the spawn's end names the sub-agent's thread: its rollout imports as that session
          const subagent = { session: derivedSessionId(this.format, payload.new_thread_id), toolCallId: payload.call_id ?? null };
          return { drafts: [{ ...keptDraft(this.format, "event_msg"), [SUBAGENT_FIELD]: subagent }], outcome: "kept" };
        }
        return { drafts: [keptDraft(this.format, "event_msg")], outcome: "kept" };
      case "turn_context":
        if (payload.model !== undefined) this.model = payload.model;
        if (this.dir === null && typeof payload.cwd === "string") this.dir = payload.cwd;
        return { drafts: [keptDraft(this.format, "turn_context")], outcome: "kept" };
      case "compacted":
        return {
          drafts: [
            {
              type: "compaction",
              summary: typeof payload.message === "string" ? payload.message : "",
              firstKeptEntryId: "",
              tokensBefore: 0,
            },
          ],
          outcome: "mapped",
        };
      case "response_item":
        return this.item(payload);
      default:
        return { drafts: [keptDraft(this.format, String(r.type))], outcome: "kept" };
    }
  }

  /** A prompt as an event: a user message unless the same prompt came as a response item. */
  private promptEvent(p: RawRecord): MappedLine {
    const text = p.message as string;
    if (text !== "" && this.promptItems.some((t) => t.includes(text)))
      return { drafts: [keptDraft(this.format, "event_msg")], outcome: "kept" };
    this.promptEvents.push(text);
    const images = Array.isArray(p.images) ? p.images.map((url) => block({ type: "input_image", image_url: url })) : [];
    const content = [{ type: "text", text }, ...images];
    return { drafts: [{ type: "message", message: { role: "user", content, timestamp: this.lastTimestamp } }], outcome: "mapped" };
  }

  private item(p: RawRecord): MappedLine {
    const mapped = this.itemOf(p);
    if (mapped.outcome === "mapped" && !(p.type === "message" && p.role === "user")) {
      this.promptItems = [];
      this.promptEvents = [];
    }
    return mapped;
  }

  private itemOf(p: RawRecord): MappedLine {
    const timestamp = this.lastTimestamp;
    const assistant = (content: unknown[]): EntryDraft => ({
      type: "message",
      message: { role: "assistant", content, provider: this.provider, model: this.model, timestamp },
    });
    switch (p.type) {
      case "message": {
        const content = Array.isArray(p.content) ? p.content.map(block) : [];
        if (p.role === "user") {
          const text = content.map((b) => (isRecord(b) && typeof b.text === "string" ? b.text : "")).join("");
          if (this.promptEvents.some((t) => t !== "" && text.includes(t)))
            return { drafts: [keptDraft(this.format, "message:user")], outcome: "kept" };
          this.promptItems.push(text);
          return { drafts: [{ type: "message", message: { role: "user", content, timestamp } }], outcome: "mapped" };
        }
        if (p.role === "assistant") return { drafts: [assistant(content)], outcome: "mapped" };
        return { drafts: [keptDraft(this.format, `message:${String(p.role)}`)], outcome: "kept" };
      }
      case "reasoning": {
        const parts = Array.isArray(p.summary) ? p.summary : [];
        const thinking = parts.map((s) => (isRecord(s) && typeof s.text === "string" ? s.text : "")).join("\n");
        return { drafts: [assistant([{ type: "thinking", thinking }])], outcome: "mapped" };
      }
      case "function_call":
      case "custom_tool_call":
      case "local_shell_call": {
        const id = String(p.call_id ?? p.id ?? "");
        const name = p.type === "local_shell_call" ? "local_shell" : String(p.name ?? "");
        this.toolNames.set(id, name);
        const args =
          p.type === "function_call" ? parseArguments(p.arguments) : p.type === "custom_tool_call" ? { input: p.input } : p.action;
        return { drafts: [assistant([{ type: "toolCall", id, name, arguments: args }])], outcome: "mapped" };
      }
      case "function_call_output":
      case "custom_tool_call_output": {
        const id = String(p.call_id ?? "");
        const message = {
          role: "toolResult",
          toolCallId: id,
          toolName: this.toolNames.get(id) ?? "",
          content: [{ type: "text", text: outputText(p.output) }],
          isError: false,
          timestamp,
        };
        return { drafts: [{ type: "message", message }], outcome: "mapped" };
      }
      default:
        return { drafts: [keptDraft(this.format, String(p.type))], outcome: "kept" };
    }
  }
}
