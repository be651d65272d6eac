import type { StoreWarning } from "../errors.ts";
import { isRecord, type RawRecord, type SessionEntry } from "../format/types.ts";
import { convertSteps, entryRest, type ConvertStep } from "./convert-steps.ts";
import { derivedSessionId, subagentOf } from "./foreign-entry.ts";

/** The Claude Code version written in converted records: the newest whose record shapes our fixtures show. */
export const CLAUDE_CODE_VERSION = "2.1.39";

/** The record type of ours that carries an entry Claude Code cannot express (docs/interchange.md). */
export const CLAUDE_EXTENSION_TYPE = "transcript-store";

/** The record field that carries what a converted record does not say (the entry's id, metadata, originals). */
export const CLAUDE_EXTENSION_FIELD = "transcriptStore";

/** What the conversion needs besides the path. */
export interface ConvertOptions {
  /** The session id written in every record (Claude Code's `sessionId`, Codex's `session_meta.id`). */
  sessionId: string;
  /**
   * For a subagent's session (imported as one: header `parentSession` and `foreign.parent`): the
   * parent's session id and the source's fields about the spawn. The subagent is written as the agent
   * writes one: Claude Code's sidechain records under the parent's `sessionId` with an `agentId`;
   * Codex's `session_meta.source.subagent.thread_spawn`. @default null
   */
  subagentOf?: { sessionId: string; spawn: RawRecord } | null;
  cwd: string;
  warn: (warning: StoreWarning) => void;
  /**
   * Set when the path continues a transcript imported from this agent: only these steps are written,
   * after the source's own records (which `exportForeign` writes as they were). @default null (the whole path)
   */
  continuation?: Continuation | null;
  /**
   * Codex: the `session_meta.model_provider` written (Codex resumes only a thread of the provider it
   * is configured with). @default "openai"
   */
  codexProvider?: string;
}

/**
 * What writing a continuation needs: the entries the session gained after its import (the rest of
 * the path is context only: compactions' kept ranges, context edits) and the source record they
 * follow (Claude Code: the last record of its `uuid` chain on the path, whose `uuid` is the first
 * new record's parent and whose `sessionId`, `cwd`, sidechain and agent id are kept; Codex: the last
 * `turn_context`, whose model is the one in use).
 */
export interface Continuation {
  entries: ReadonlySet<string>;
  after: RawRecord | null;
  /**
   * Codex: the `ordinal` of the first line written, when the source numbers its lines (0.171.0 does,
   * and refuses to resume a file whose last line has none). @default none written
   */
  ordinal?: number;
}

/** True when `step` is written: the whole path without a continuation, else only the continuation's entries (and replays they make). */
export function writtenStep(step: ConvertStep, continuation: Continuation | null | undefined): boolean {
  if (continuation == null) return true;
  return continuation.entries.has(step.entry.id);
}

/** A Claude tool id has the API's shape (`[A-Za-z0-9_-]`); another id is rewritten and the original kept. */
function toolId(id: unknown): string {
  const s = typeof id === "string" && id !== "" ? id : "tool";
  return s.replace(/[^A-Za-z0-9_-]/g, "_");
}

const STOP_REASONS: Record<string, string> = { stop: "end_turn", toolUse: "tool_use", length: "max_tokens" };

/** The agent id a converted subagent gets in Claude Code (`agent-<id>.jsonl`): `a` and 16 hex digits of its session id. */
export function claudeAgentId(sessionId: string): string {
  return `a${sessionId.replace(/-/g, "").slice(0, 16)}`;
}

/** One pi block in Claude's shape, or null (then what was lost is in `lost`). */
function claudeBlock(b: unknown, index: number, lost: RawRecord[], anthropic: boolean): unknown {
  if (!isRecord(b)) {
    lost.push({ index, block: b });
    return null;
  }
  if (b.type === "text" && typeof b.text === "string") return { type: "text", text: b.text };
  if (b.type === "image" && typeof b.data === "string" && typeof b.mimeType === "string" && !b.data.startsWith("blob:sha256:"))
    return { type: "image", source: { type: "base64", media_type: b.mimeType, data: b.data } };
  if (b.type === "thinking" && typeof b.thinking === "string") {
    const signature = typeof b.thinkingSignature === "string" ? b.thinkingSignature : "";
    // Claude's API refuses a thinking block without Anthropic's signature: another provider's thinking stays in the extension
    if (!anthropic || signature === "") {
      lost.push({ index, block: b, reason: "thinking without an Anthropic signature" });
      return null;
    }
    if (b.redacted === true) return { type: "redacted_thinking", data: signature };
    return { type: "thinking", thinking: b.thinking, signature };
  }
  if (b.type === "toolCall") {
    const id = toolId(b.id);
    if (id !== b.id) lost.push({ index, toolCallId: b.id });
    if (!isRecord(b.arguments)) lost.push({ index, arguments: b.arguments ?? null });
    return { type: "tool_use", id, name: String(b.name ?? ""), input: isRecord(b.arguments) ? b.arguments : {} };
  }
  // an unknown block, or an image whose blob is missing (its ref is kept)
  lost.push({ index, block: b });
  return null;
}

/** Blocks of a pi message in Claude's shapes; what has no Claude shape goes to `lost`. */
function claudeBlocks(content: unknown, lost: RawRecord[], anthropic: boolean): unknown[] {
  const blocks = typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [];
  const out: unknown[] = [];
  blocks.forEach((b, index) => {
    const block = claudeBlock(b, index, lost, anthropic);
    if (block !== null) out.push(block);
  });
  return out;
}

/**
 * A session's path as Claude Code transcript records (`~/.claude/projects/<slug>/<uuid>.jsonl`):
 * one `user` / `assistant` record per message (a tool result a `user` record with one `tool_result`
 * block), chained by `uuid` / `parentUuid`; a compaction a `compact_boundary` (a new root) and its
 * `isCompactSummary` prompt, then its kept range again. Every record names its entry under
 * `transcriptStore` (with what Claude Code cannot say: the message's other fields, blocks of no
 * Claude shape); an entry with no Claude form is a `transcript-store` record holding it whole, and a
 * warning (`EXTENSION_KEPT`) says so. Pure: ids derive from the session id and entry ids.
 */
export function* toClaudeCode(path: readonly SessionEntry[], options: ConvertOptions): Generator<RawRecord> {
  const { sessionId } = options;
  const sub = options.subagentOf ?? null;
  const after = options.continuation?.after ?? null;
  const cwd = typeof after?.cwd === "string" ? after.cwd : options.cwd;
  // a continuation goes on from the source's chain, under the source's own session id
  let parent: string | null = typeof after?.uuid === "string" ? after.uuid : null;
  const ownSession = typeof after?.sessionId === "string" ? after.sessionId : (sub?.sessionId ?? sessionId);
  const uuidOf = (key: string) => derivedSessionId("claude-code", `${sessionId}:${key}`);
  // a subagent's records name its parent's session and its own agent id (the file goes in <parent>/subagents/agent-<id>.jsonl)
  const agentId =
    after !== null
      ? typeof after.agentId === "string"
        ? after.agentId
        : null
      : sub === null
        ? null
        : typeof sub.spawn.agentId === "string"
          ? sub.spawn.agentId
          : claudeAgentId(sessionId);
  // the tool calls that spawned a subagent (imported links): their results name its agent id, as Claude Code's Task results do
  const spawned = new Map<string, string>();
  for (const e of path) {
    const link = subagentOf(e);
    if (link?.toolCallId) spawned.set(link.toolCallId, link.session);
  }
  const base = (type: string): RawRecord => ({
    parentUuid: parent,
    isSidechain: after !== null ? after.isSidechain === true : sub !== null,
    userType: "external",
    cwd,
    sessionId: ownSession,
    version: CLAUDE_CODE_VERSION,
    ...(agentId === null ? {} : { agentId }),
    type,
  });
  const warn = (entry: SessionEntry, what: string, where = `the record's ${CLAUDE_EXTENSION_FIELD} field`) =>
    options.warn({ code: "EXTENSION_KEPT", message: `entry ${entry.id} (${entry.type}): ${what}; kept in ${where}` });

  const emit = (step: Exclude<ConvertStep, { kind: "kept" | "compaction" }>): RawRecord => {
    const key = step.replay === undefined ? step.entry.id : `${step.entry.id}:after:${step.replay}`;
    const uuid = uuidOf(key);
    const lost: RawRecord[] = [];
    const ext: RawRecord = { entry: step.kind === "note" ? step.entry : entryRest(step.entry) };
    if (step.replay !== undefined) ext.replayOf = step.replay;
    let record: RawRecord;
    if (step.kind === "note") {
      record = { ...base("user"), message: { role: "user", content: step.text } };
      warn(step.entry, `no Claude Code role for it: written as a user message`);
    } else if (step.kind === "user") {
      const content = typeof step.message.content === "string" ? step.message.content : claudeBlocks(step.message.content, lost, true);
      record = { ...base("user"), message: { role: "user", content } };
    } else if (step.kind === "toolResult") {
      const m = step.message;
      const result: RawRecord = { type: "tool_result", tool_use_id: toolId(m.toolCallId), content: claudeBlocks(m.content, lost, true) };
      if (m.isError === true) result.is_error = true;
      record = { ...base("user"), message: { role: "user", content: [result] } };
      const child = typeof m.toolCallId === "string" && step.replay === undefined ? spawned.get(m.toolCallId) : undefined;
      if (child !== undefined) record.toolUseResult = { status: "completed", agentId: claudeAgentId(child) };
    } else {
      const m = step.message;
      const content = claudeBlocks(m.content, lost, m.provider === "anthropic");
      const message: RawRecord = {
        id: `msg_${uuid.replace(/-/g, "")}`,
        type: "message",
        role: "assistant",
        model: typeof m.model === "string" ? m.model : "unknown",
        content,
        stop_reason: typeof m.stopReason === "string" && Object.hasOwn(STOP_REASONS, m.stopReason) ? STOP_REASONS[m.stopReason] : null,
        stop_sequence: null,
      };
      if (isRecord(m.usage)) {
        const u = m.usage;
        const n = (v: unknown) => (typeof v === "number" ? v : 0);
        message.usage = {
          input_tokens: n(u.input),
          output_tokens: n(u.output),
          cache_read_input_tokens: n(u.cacheRead),
          cache_creation_input_tokens: n(u.cacheWrite),
        };
      }
      record = { ...base("assistant"), message };
    }
    if (lost.length > 0) {
      ext.lost = lost;
      warn(step.entry, `${lost.length} part(s) with no Claude Code form`);
    }
    record.uuid = uuid;
    record.timestamp = step.entry.timestamp;
    record[CLAUDE_EXTENSION_FIELD] = ext;
    parent = uuid;
    return record;
  };

  for (const step of convertSteps(path)) {
    if (!writtenStep(step, options.continuation)) continue;
    if (step.kind === "kept") {
      warn(step.entry, `${step.why}, which Claude Code has no record for`, `a ${CLAUDE_EXTENSION_TYPE} record`);
      // outside the uuid chain: Claude Code's reader does not know the type
      yield { type: CLAUDE_EXTENSION_TYPE, sessionId: ownSession, timestamp: step.entry.timestamp, entry: step.entry };
    } else if (step.kind === "compaction") {
      const boundary = uuidOf(`${step.entry.id}:boundary`);
      const logical = parent;
      parent = null;
      yield {
        ...base("system"),
        logicalParentUuid: logical,
        subtype: "compact_boundary",
        content: "Conversation compacted",
        isMeta: false,
        timestamp: step.entry.timestamp,
        uuid: boundary,
        level: "info",
        compactMetadata: { trigger: "manual", preTokens: step.tokensBefore },
      };
      parent = boundary;
      const uuid = uuidOf(step.entry.id);
      yield {
        ...base("user"),
        message: { role: "user", content: step.summary },
        isCompactSummary: true,
        isVisibleInTranscriptOnly: true,
        uuid,
        timestamp: step.entry.timestamp,
        [CLAUDE_EXTENSION_FIELD]: { entry: step.entry },
      };
      parent = uuid;
    } else yield emit(step);
  }
}
