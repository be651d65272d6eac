import { isRecord, type RawRecord, type SessionEntry } from "../format/types.ts";
import { convertSteps, entryRest, type ConvertStep } from "./convert-steps.ts";
import { subagentOf } from "./foreign-entry.ts";
import { writtenStep, type ConvertOptions } from "./to-claude-code.ts";

/** The Codex version written in `session_meta.cli_version`: the newest whose rollout shapes our fixtures show. */
export const CODEX_VERSION = "0.129.0";

/** The response item type of ours that carries an entry (or what a converted item cannot say; docs/interchange.md). */
export const CODEX_EXTENSION_TYPE = "transcript_store";

/** The model of an assistant message or a `model_change` entry, as a name. */
function modelName(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (isRecord(value) && typeof value.modelId === "string") return value.modelId;
  if (isRecord(value) && typeof value.id === "string") return value.id;
  return null;
}

/**
 * A session's path as a Codex rollout (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): a
 * `session_meta`, a `turn_context` (again when the model changes), and `response_item`s: a prompt a
 * user `message` (images as `input_image` data URLs) followed by its `user_message` event, an
 * assistant message one item per kind of block (`reasoning` for thinking, an assistant `message`
 * for text, a `function_call` per tool call, arguments as a JSON string), a tool result a
 * `function_call_output`; a compaction a `compacted` line (its summary) and its kept range again.
 * What Codex cannot say (the entry's metadata, an error flag, images in a tool result, entries with
 * no Codex form) goes in a `transcript_store` response item after it, with a warning
 * (`EXTENSION_KEPT`) for all but the metadata. Pure.
 */
export function* toCodex(path: readonly SessionEntry[], options: ConvertOptions): Generator<RawRecord> {
  const first = path[0]?.timestamp ?? new Date(0).toISOString();
  const continuation = options.continuation ?? null;
  let model: string | null = null;
  // a source that numbers its lines is continued in its numbering
  let ordinal = continuation?.ordinal;
  const line = (timestamp: string, type: string, payload: RawRecord): RawRecord =>
    ordinal === undefined ? { timestamp, type, payload } : { timestamp, ordinal: ordinal++, type, payload };
  const turnContext = (timestamp: string) =>
    line(timestamp, "turn_context", {
      cwd: options.cwd,
      approval_policy: "on-request",
      sandbox_policy: { type: "workspace-write" },
      model: model ?? "unknown",
      summary: "auto",
    });
  if (continuation !== null) {
    // the source's session_meta and turn_context are written already: go on with the model its last turn_context names
    const payload = continuation.after?.payload;
    model = isRecord(payload) ? modelName(payload.model) : null;
  } else yield* opening();
  const warn = (entry: SessionEntry, what: string) =>
    options.warn({ code: "EXTENSION_KEPT", message: `entry ${entry.id} (${entry.type}): ${what}; kept in a ${CODEX_EXTENSION_TYPE} item` });
  const extension = (ts: string, body: RawRecord) => line(ts, "response_item", { type: CODEX_EXTENSION_TYPE, ...body });

  for (const step of convertSteps(path)) {
    if (!writtenStep(step, continuation)) continue;
    const ts = step.entry.timestamp;
    if (step.kind === "kept") {
      const changed = step.entry.type === "model_change" ? modelName(step.entry.model) : null;
      if (changed !== null && changed !== model) {
        model = changed;
        yield turnContext(ts);
      } else warn(step.entry, `${step.why}, which Codex has no item for`);
      yield extension(ts, { entry: step.entry });
      continue;
    }
    if (step.kind === "compaction") {
      yield line(ts, "compacted", { message: step.summary });
      yield extension(ts, { entry: step.entry });
      continue;
    }
    yield* items(step, ts, (what) => warn(step.entry, what));
    // a result that spawned a subagent (an imported link): the event Codex writes when a spawn ends names its thread
    const link = subagentOf(step.entry);
    if (link !== null && step.replay === undefined)
      yield line(ts, "event_msg", { type: "collab_agent_spawn_end", call_id: link.toolCallId, new_thread_id: link.session });
    const ext: RawRecord = { entry: step.kind === "note" ? step.entry : entryRest(step.entry) };
    if (step.replay !== undefined) ext.replayOf = step.replay;
    yield extension(ts, ext);
  }

  function* opening() {
    for (const e of path) {
      if (e.type === "message" && isRecord(e.message) && e.message.role === "assistant") {
        model = modelName(e.message.model);
        break;
      }
    }
    yield line(first, "session_meta", {
      id: options.sessionId,
      timestamp: first,
      cwd: options.cwd,
      originator: "transcript-store",
      cli_version: CODEX_VERSION,
      // a sub-agent's rollout names the thread that spawned it
      source: options.subagentOf == null ? "cli" : { subagent: { thread_spawn: threadSpawn(options.subagentOf) } },
      // the caller's (Codex refuses to resume a thread of another provider than its own), else Codex's default:
      // another agent's provider name means nothing to Codex; each message's own is in its extension item
      model_provider: options.codexProvider ?? "openai",
    });
    yield turnContext(first);
  }

  function* items(step: Exclude<ConvertStep, { kind: "kept" | "compaction" }>, ts: string, lose: (what: string) => void) {
    if (step.kind === "note" || step.kind === "user") {
      if (step.kind === "note") lose("no Codex role for it: written as a user message");
      const content = step.kind === "note" ? [{ type: "input_text", text: step.text }] : userContent(step.message.content, lose);
      yield line(ts, "response_item", { type: "message", role: "user", content });
      const text = content.map((c) => (c.type === "input_text" ? String(c.text) : "")).join("");
      const images = content.filter((c) => c.type === "input_image").map((c) => c.image_url);
      // the event Codex lists a thread's prompts by (an image-only prompt has no text to pair it with: none)
      if (text !== "") yield line(ts, "event_msg", { type: "user_message", message: text, ...(images.length > 0 ? { images } : {}) });
      return;
    }
    const m = step.message;
    if (step.kind === "toolResult") {
      const blocks = Array.isArray(m.content) ? m.content : [];
      const text =
        typeof m.content === "string"
          ? m.content
          : blocks.map((b) => (isRecord(b) && b.type === "text" && typeof b.text === "string" ? b.text : "")).join("");
      if (blocks.some((b) => !isRecord(b) || b.type !== "text")) lose("a tool result's non-text parts (Codex's output here is text)");
      if (m.isError === true) lose("an error result (a Codex function output has no error flag)");
      yield line(ts, "response_item", { type: "function_call_output", call_id: String(m.toolCallId ?? ""), output: text });
      return;
    }
    const name = modelName(m.model);
    // a kept range written again after a compaction is history: it does not change the turn's model
    if (name !== null && name !== model && step.replay === undefined) {
      model = name;
      yield turnContext(ts);
    }
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : Array.isArray(m.content) ? m.content : [];
    let text: RawRecord[] = [];
    const flushText = function* () {
      if (text.length > 0) yield line(ts, "response_item", { type: "message", role: "assistant", content: text });
      text = [];
    };
    for (const b of blocks) {
      if (isRecord(b) && b.type === "text" && typeof b.text === "string") {
        text.push({ type: "output_text", text: b.text });
        continue;
      }
      yield* flushText();
      if (isRecord(b) && b.type === "thinking" && typeof b.thinking === "string") {
        // pi keeps OpenAI's reasoning item whole as the signature: its encrypted content goes back where Codex keeps it
        const own = openaiReasoning(b.thinkingSignature);
        if (own === null && typeof b.thinkingSignature === "string" && b.thinkingSignature !== "")
          lose("a thinking signature that is not OpenAI's");
        yield line(ts, "response_item", {
          type: "reasoning",
          summary: [{ type: "summary_text", text: b.thinking }],
          content: null,
          encrypted_content: typeof own?.encrypted_content === "string" ? own.encrypted_content : null,
        });
      } else if (isRecord(b) && b.type === "toolCall") {
        const args = JSON.stringify(b.arguments ?? {});
        yield line(ts, "response_item", {
          type: "function_call",
          name: String(b.name ?? ""),
          arguments: args,
          call_id: String(b.id ?? ""),
        });
      } else lose("a block with no Codex form");
    }
    yield* flushText();
    if (blocks.length === 0) yield line(ts, "response_item", { type: "message", role: "assistant", content: [] });
  }
}

/** Codex's `thread_spawn` for a subagent: its parent thread, and the depth and role a Codex source named. */
function threadSpawn(sub: { sessionId: string; spawn: RawRecord }): RawRecord {
  const spawn: RawRecord = { parent_thread_id: sub.sessionId, depth: typeof sub.spawn.depth === "number" ? sub.spawn.depth : 1 };
  for (const key of ["agent_role", "agent_nickname"]) if (typeof sub.spawn[key] === "string") spawn[key] = sub.spawn[key];
  return spawn;
}

/** The OpenAI reasoning item a thinking signature holds (pi's openai-responses provider keeps it as JSON), or null. */
function openaiReasoning(signature: unknown): RawRecord | null {
  if (typeof signature !== "string" || !signature.startsWith("{")) return null;
  try {
    const item: unknown = JSON.parse(signature);
    return isRecord(item) && item.type === "reasoning" ? item : null;
  } catch {
    return null;
  }
}

/** A user message's content as Codex input items (`input_text`, `input_image` data URLs). */
function userContent(content: unknown, lose: (what: string) => void): RawRecord[] {
  if (typeof content === "string") return [{ type: "input_text", text: content }];
  const out: RawRecord[] = [];
  for (const b of Array.isArray(content) ? content : []) {
    if (isRecord(b) && b.type === "text" && typeof b.text === "string") out.push({ type: "input_text", text: b.text });
    else if (isRecord(b) && b.type === "image" && typeof b.data === "string" && !b.data.startsWith("blob:sha256:"))
      out.push({ type: "input_image", image_url: `data:${String(b.mimeType)};base64,${b.data}` });
    else lose("a block with no Codex form (or an image whose blob is missing)");
  }
  return out;
}
