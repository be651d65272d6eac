import { SHIPPED_PRICES } from "../accounting/price-table-data.ts";
import { priceRows } from "../accounting/price-table.ts";
import { usageRowOf } from "../accounting/usage-rows.ts";
import { isRecord, type SessionEntry } from "../format/types.ts";
import { imageDataUrl } from "./html-text.ts";
import { type MessagePart, viewOf } from "./message-parts.ts";
import { branchOf, type TranscriptSource } from "./transcript-source.ts";

/**
 * The ATIF version written: Harbor's RFC 0001 (Agent Trajectory Interchange Format), v1.8. Nothing
 * written here is newer than v1.6 (image content parts); docs/interchange.md lists the sources.
 */
export const ATIF_SCHEMA_VERSION = "ATIF-v1.8";

/** The image types an ATIF image part may declare (RFC 0001, `ImageSource.media_type`). */
export const ATIF_IMAGE_TYPES: ReadonlySet<string> = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

export interface AtifOptions {
  /**
   * The agent that produced the session (ATIF `agent`); the session file does not say.
   * @default { name: "transcript-store", version: "unknown" }
   */
  agent?: { name: string; version: string };
}

type Json = Record<string, unknown>;

/** Roles written as ATIF `system` steps: the prompt, and the summaries that stand for earlier turns. */
const SYSTEM_ROLES: ReadonlySet<string> = new Set(["system", "compaction", "branch_summary", "compactionSummary", "branchSummary"]);

/** An ATIF `message` or observation `content`: a string, or content parts when images are in it. */
function contentOf(parts: readonly MessagePart[]): string | Json[] {
  if (!parts.some((p) => p.kind === "image")) {
    return parts
      .filter((p) => p.kind === "text")
      .map((p) => p.text)
      .join("\n\n");
  }
  const out: Json[] = [];
  for (const p of parts) {
    if (p.kind === "text") out.push({ type: "text", text: p.text });
    else if (p.kind === "image") {
      // ATIF names an image by path; a data: URL keeps the trajectory one self-contained file.
      const url = imageDataUrl(p.mimeType, p.data);
      if (url === null) out.push({ type: "text", text: `[image not readable (its blob is missing or damaged): ${p.data.slice(0, 100)}]` });
      else if (!ATIF_IMAGE_TYPES.has(p.mimeType))
        out.push({ type: "text", text: `[image of type ${p.mimeType} left out: ATIF has no such media type]` });
      else out.push({ type: "image", source: { media_type: p.mimeType, path: url } });
    }
  }
  return out;
}

/** ATIF `metrics` from an assistant message's usage: prompt tokens count cached and uncached input. */
function metricsOf(entry: SessionEntry, sessionId: string): Json | undefined {
  const found = usageRowOf(entry, { sessionId, cwd: "", line: 0, model: { provider: null, model: null } }).row;
  if (found === null) return undefined;
  // a call whose cost the agent did not record (an imported one) is priced from the shipped table, else has no cost_usd
  const [row] = priceRows([found], SHIPPED_PRICES);
  const t = row!.tokens;
  const extra: Json = { cache_write_tokens: t.cacheWrite, uncached_input_tokens: t.input };
  if (row!.unpriced === true) extra.unpriced = true;
  if (row!.pricedBy !== undefined) extra.priced_by = row!.pricedBy;
  return {
    prompt_tokens: t.input + t.cacheRead + t.cacheWrite,
    completion_tokens: t.output,
    cached_tokens: t.cacheRead,
    ...(row!.unpriced === true ? {} : { cost_usd: row!.cost.total }),
    extra,
  };
}

function timestampOf(entry: SessionEntry): string | undefined {
  return typeof entry.timestamp === "string" && !Number.isNaN(Date.parse(entry.timestamp)) ? entry.timestamp : undefined;
}

/** A step's common fields; `step_id` is given when the step is written. */
function stepBase(entry: SessionEntry, source: "system" | "user" | "agent"): Json {
  const step: Json = { step_id: 0 };
  const at = timestampOf(entry);
  if (at !== undefined) step.timestamp = at;
  step.source = source;
  return step;
}

interface Totals {
  prompt: number;
  completion: number;
  cached: number;
  cost: number;
  /** Agent steps whose call has no cost (none recorded, no price in the table). */
  unpriced: number;
  steps: number;
}

/**
 * The ATIF trajectory of one branch (root → `source.leafId`), as JSON text in pieces: a step per
 * user, system and assistant message (tool results become the `observation` of the step that
 * called the tool), thinking as `reasoning_content`, usage as `metrics`. Entries that are not
 * messages (labels, custom state, model changes) are counted under `extra.transcript_store`.
 */
export function* atifChunks(source: TranscriptSource, options: AtifOptions = {}): Generator<string> {
  const branch = branchOf(source.entries, source.leafId);
  const firstModel = branch.map(viewOf).find((v) => v?.role === "assistant" && v.model !== undefined)?.model;
  const agent: Json = { ...(options.agent ?? { name: "transcript-store", version: "unknown" }) };
  if (firstModel !== undefined) agent.model_name = firstModel;
  const root: Json = { schema_version: ATIF_SCHEMA_VERSION, session_id: source.header.id, agent };
  const head = JSON.stringify(root);
  yield `${head.slice(0, -1)},"steps":[\n`;

  const totals: Totals = { prompt: 0, completion: 0, cached: 0, cost: 0, unpriced: 0, steps: 0 };
  // A Map: an entry's type may be "constructor" or "__proto__".
  const unmapped = new Map<string, number>();
  let pending: Json | null = null;
  const write = (step: Json): string => {
    totals.steps++;
    step.step_id = totals.steps;
    return `${totals.steps === 1 ? "" : ",\n"}${JSON.stringify(step)}`;
  };

  for (const raw of branch) {
    const view = viewOf(raw);
    if (view === null || view.role === "model_change" || view.role === "thinking_level_change") {
      unmapped.set(raw.type, (unmapped.get(raw.type) ?? 0) + 1);
      continue;
    }
    const parts = viewOf(source.rehydrate(raw))!.parts;
    if (view.role === "toolResult") {
      const result: Json = { source_call_id: view.toolCallId ?? null, content: contentOf(parts) };
      const extra: Json = { entry_id: raw.id };
      if (view.toolName !== undefined) extra.tool_name = view.toolName;
      if (view.isError === true) extra.is_error = true;
      result.extra = extra;
      const calls = pending === null ? [] : ((pending.tool_calls as Json[] | undefined) ?? []);
      if (pending !== null && calls.some((c) => c.tool_call_id === view.toolCallId)) {
        pending.observation ??= { results: [] };
        (pending.observation as { results: Json[] }).results.push(result);
        continue;
      }
      // A result whose call is not in the step before it: a system step of its own (ATIF v1.2+).
      if (pending !== null) yield write(pending);
      pending = null;
      const step = stepBase(raw, "system");
      step.message = "";
      extra.unmatched_call_id = view.toolCallId ?? null;
      result.source_call_id = null;
      step.observation = { results: [result] };
      step.extra = { entry_id: raw.id };
      yield write(step);
      continue;
    }
    if (pending !== null) yield write(pending);
    pending = null;
    if (view.role === "assistant") {
      const step = stepBase(raw, "agent");
      if (view.model !== undefined) step.model_name = view.model;
      step.message = contentOf(parts);
      const thinking = parts.filter((p) => p.kind === "thinking" && !p.redacted).map((p) => (p.kind === "thinking" ? p.text : ""));
      if (thinking.length > 0) step.reasoning_content = thinking.join("\n\n");
      const calls = parts.flatMap((p) => (p.kind === "toolCall" ? [p] : []));
      if (calls.length > 0) {
        step.tool_calls = calls.map((c) => {
          const call: Json = { tool_call_id: c.id, function_name: c.name, arguments: isRecord(c.arguments) ? c.arguments : {} };
          if (!isRecord(c.arguments) && c.arguments !== undefined) call.extra = { raw_arguments: c.arguments };
          return call;
        });
      }
      const metrics = metricsOf(raw, source.header.id);
      if (metrics !== undefined) {
        step.metrics = metrics;
        totals.prompt += metrics.prompt_tokens as number;
        totals.completion += metrics.completion_tokens as number;
        totals.cached += metrics.cached_tokens as number;
        if (typeof metrics.cost_usd === "number") totals.cost += metrics.cost_usd;
        else totals.unpriced++;
      }
      step.llm_call_count = 1;
      const redacted = parts.filter((p) => p.kind === "thinking" && p.redacted).length;
      step.extra = redacted > 0 ? { entry_id: raw.id, redacted_thinking_blocks: redacted } : { entry_id: raw.id };
      pending = step;
      continue;
    }
    // user, custom (extension context the model reads as user input), bash runs: the user's side.
    const step = stepBase(raw, SYSTEM_ROLES.has(view.role) ? "system" : "user");
    step.message = contentOf(parts);
    const extra: Json = { entry_id: raw.id, role: view.role };
    if (raw.type === "compaction") Object.assign(extra, { first_kept_entry_id: raw.firstKeptEntryId, tokens_before: raw.tokensBefore });
    step.extra = extra;
    yield write(step);
  }
  if (pending !== null) yield write(pending);
  if (totals.steps === 0) {
    // ATIF requires at least one step: an empty branch says so in a system step.
    yield write({ step_id: 0, source: "system", message: "", extra: { empty_branch: true } });
  }
  const final: Json = {
    total_prompt_tokens: totals.prompt,
    total_completion_tokens: totals.completion,
    total_cached_tokens: totals.cached,
    // a total over calls some of which have no price would understate: left out, and the count said
    ...(totals.unpriced === 0 ? { total_cost_usd: totals.cost } : {}),
    total_steps: totals.steps,
    ...(totals.unpriced === 0 ? {} : { extra: { unpriced_steps: totals.unpriced } }),
  };
  const extra: Json = {
    transcript_store: { leaf_id: source.leafId, cwd: source.header.cwd, unmapped_entries: Object.fromEntries(unmapped) },
  };
  yield `\n],"final_metrics":${JSON.stringify(final)},"extra":${JSON.stringify(extra)}}\n`;
}
