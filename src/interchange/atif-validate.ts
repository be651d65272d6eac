import { isRecord } from "../format/types.ts";
import { ATIF_IMAGE_TYPES } from "./atif.ts";

/**
 * The rules of Harbor's ATIF (RFC 0001, v1.0 to v1.8) as a checker of ours: Harbor publishes its
 * schema as Pydantic models and a validator in Python, not as a JSON Schema file, so the fields,
 * types, closed key sets and cross-field rules they state are encoded here (docs/interchange.md
 * names the sources). Returns every problem found, each with the JSON path it is at.
 */
export interface AtifProblem {
  path: string;
  message: string;
}

/** The `schema_version` values a reader of the RFC accepts. */
export const ATIF_VERSIONS: readonly string[] = ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8"].map((v) => `ATIF-v${v}`);

const ROOT_KEYS = [
  "schema_version",
  "session_id",
  "trajectory_id",
  "agent",
  "steps",
  "notes",
  "final_metrics",
  "continued_trajectory_ref",
  "extra",
  "subagent_trajectories",
];
const AGENT_KEYS = ["name", "version", "model_name", "tool_definitions", "extra"];
const STEP_KEYS = [
  "step_id",
  "timestamp",
  "source",
  "model_name",
  "reasoning_effort",
  "message",
  "reasoning_content",
  "tool_calls",
  "observation",
  "metrics",
  "is_copied_context",
  "llm_call_count",
  "extra",
];
/** Fields only an agent step may carry. */
const AGENT_ONLY = ["model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"];
const TOOL_CALL_KEYS = ["tool_call_id", "function_name", "arguments", "extra"];
const RESULT_KEYS = ["source_call_id", "content", "subagent_trajectory_ref", "extra"];
const METRICS_KEYS = [
  "prompt_tokens",
  "completion_tokens",
  "cached_tokens",
  "cost_usd",
  "prompt_token_ids",
  "completion_token_ids",
  "logprobs",
  "extra",
];
const FINAL_KEYS = ["total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_cost_usd", "total_steps", "extra"];
const REF_KEYS = ["trajectory_id", "session_id", "trajectory_path", "extra"];
const AUDIO_TYPES = new Set(["audio/wav", "audio/mpeg", "audio/mp4", "audio/aac", "audio/ogg", "audio/flac", "audio/webm", "audio/aiff"]);
/** ISO 8601 date-time, as Python's `datetime.fromisoformat` reads it (a `Z` suffix allowed). */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

class Checker {
  readonly problems: AtifProblem[] = [];

  fail(path: string, message: string): void {
    this.problems.push({ path, message });
  }

  object(value: unknown, path: string, keys: readonly string[], required: readonly string[]): value is Record<string, unknown> {
    if (!isRecord(value)) {
      this.fail(path, "must be an object");
      return false;
    }
    for (const k of Object.keys(value)) if (!keys.includes(k)) this.fail(`${path}.${k}`, "is not a field of this object");
    for (const k of required) if (value[k] === undefined || value[k] === null) this.fail(`${path}.${k}`, "is required");
    return true;
  }

  /** An optional field (absent or null is fine) of the given kind. */
  optional(value: unknown, path: string, kind: "string" | "number" | "integer" | "boolean" | "object" | "array"): void {
    if (value === undefined || value === null) return;
    const ok =
      kind === "integer"
        ? Number.isInteger(value) && (value as number) >= 0
        : kind === "number"
          ? typeof value === "number" && Number.isFinite(value)
          : kind === "object"
            ? isRecord(value)
            : kind === "array"
              ? Array.isArray(value)
              : typeof value === kind;
    if (!ok) this.fail(path, `must be ${kind === "integer" ? "a non-negative integer" : `a ${kind}`}`);
  }

  trajectory(doc: unknown, path: string): void {
    if (!this.object(doc, path, ROOT_KEYS, ["schema_version", "agent", "steps"])) return;
    if (doc.schema_version !== undefined && !ATIF_VERSIONS.includes(doc.schema_version as string))
      this.fail(`${path}.schema_version`, `must be one of ${ATIF_VERSIONS.join(", ")}`);
    const old = ATIF_VERSIONS.indexOf(doc.schema_version as string) < ATIF_VERSIONS.indexOf("ATIF-v1.7");
    if (old && typeof doc.session_id !== "string") this.fail(`${path}.session_id`, "is required up to ATIF-v1.6");
    for (const k of ["session_id", "trajectory_id", "notes", "continued_trajectory_ref"]) this.optional(doc[k], `${path}.${k}`, "string");
    this.optional(doc.extra, `${path}.extra`, "object");
    if (this.object(doc.agent, `${path}.agent`, AGENT_KEYS, ["name", "version"])) {
      const a = doc.agent;
      for (const k of ["name", "version", "model_name"]) this.optional(a[k], `${path}.agent.${k}`, "string");
      this.optional(a.extra, `${path}.agent.extra`, "object");
      this.optional(a.tool_definitions, `${path}.agent.tool_definitions`, "array");
    }
    if (!Array.isArray(doc.steps)) this.fail(`${path}.steps`, "must be an array");
    else if (doc.steps.length === 0) this.fail(`${path}.steps`, "must hold at least one step");
    else
      doc.steps.forEach((s, i) => {
        this.step(s, `${path}.steps[${i}]`, i + 1);
      });
    if (doc.final_metrics !== undefined && doc.final_metrics !== null) this.finalMetrics(doc.final_metrics, `${path}.final_metrics`);
    if (doc.subagent_trajectories !== undefined && doc.subagent_trajectories !== null) {
      if (!Array.isArray(doc.subagent_trajectories)) this.fail(`${path}.subagent_trajectories`, "must be an array");
      else {
        const seen = new Set<unknown>();
        doc.subagent_trajectories.forEach((t, i) => {
          const at = `${path}.subagent_trajectories[${i}]`;
          this.trajectory(t, at);
          const id = isRecord(t) ? t.trajectory_id : undefined;
          if (typeof id !== "string") this.fail(`${at}.trajectory_id`, "is required on an embedded trajectory");
          else if (seen.has(id)) this.fail(`${at}.trajectory_id`, "repeats another embedded trajectory's id");
          seen.add(id);
        });
      }
    }
  }

  step(step: unknown, path: string, expectedId: number): void {
    if (!this.object(step, path, STEP_KEYS, ["step_id", "source"])) return;
    if (step.step_id !== expectedId) this.fail(`${path}.step_id`, `must be ${expectedId} (sequential from 1)`);
    if (!["system", "user", "agent"].includes(step.source as string)) this.fail(`${path}.source`, "must be system, user or agent");
    if (step.timestamp !== undefined && step.timestamp !== null) {
      if (typeof step.timestamp !== "string" || !ISO_8601.test(step.timestamp)) this.fail(`${path}.timestamp`, "must be an ISO 8601 time");
    }
    if (step.message === undefined || step.message === null) this.fail(`${path}.message`, "is required (an empty string is fine)");
    else this.content(step.message, `${path}.message`);
    if (step.source !== "agent")
      for (const k of AGENT_ONLY)
        if (step[k] !== undefined && step[k] !== null) this.fail(`${path}.${k}`, "is only allowed on agent steps");
    this.optional(step.model_name, `${path}.model_name`, "string");
    this.optional(step.reasoning_content, `${path}.reasoning_content`, "string");
    const effort = step.reasoning_effort;
    if (effort !== undefined && effort !== null && typeof effort !== "string" && typeof effort !== "number")
      this.fail(`${path}.reasoning_effort`, "must be a string or a number");
    this.optional(step.is_copied_context, `${path}.is_copied_context`, "boolean");
    this.optional(step.llm_call_count, `${path}.llm_call_count`, "integer");
    this.optional(step.extra, `${path}.extra`, "object");
    if (step.llm_call_count === 0 && step.source === "agent") {
      for (const k of ["metrics", "reasoning_content"])
        if (step[k] !== undefined && step[k] !== null) this.fail(`${path}.${k}`, "must be absent when llm_call_count is 0");
    }
    const callIds = new Set<string>();
    if (step.tool_calls !== undefined && step.tool_calls !== null) {
      if (!Array.isArray(step.tool_calls)) this.fail(`${path}.tool_calls`, "must be an array");
      else
        step.tool_calls.forEach((c, i) => {
          const at = `${path}.tool_calls[${i}]`;
          if (!this.object(c, at, TOOL_CALL_KEYS, ["tool_call_id", "function_name", "arguments"])) return;
          this.optional(c.tool_call_id, `${at}.tool_call_id`, "string");
          this.optional(c.function_name, `${at}.function_name`, "string");
          this.optional(c.arguments, `${at}.arguments`, "object");
          this.optional(c.extra, `${at}.extra`, "object");
          if (typeof c.tool_call_id === "string") callIds.add(c.tool_call_id);
        });
    }
    if (step.observation !== undefined && step.observation !== null) this.observation(step.observation, `${path}.observation`, callIds);
    if (step.metrics !== undefined && step.metrics !== null) this.metrics(step.metrics, `${path}.metrics`);
  }

  observation(value: unknown, path: string, callIds: Set<string>): void {
    if (!this.object(value, path, ["results"], ["results"])) return;
    if (!Array.isArray(value.results)) {
      this.fail(`${path}.results`, "must be an array");
      return;
    }
    value.results.forEach((r, i) => {
      const at = `${path}.results[${i}]`;
      if (!this.object(r, at, RESULT_KEYS, [])) return;
      this.optional(r.source_call_id, `${at}.source_call_id`, "string");
      if (typeof r.source_call_id === "string" && !callIds.has(r.source_call_id))
        this.fail(`${at}.source_call_id`, "names no tool call of this step");
      if (r.content !== undefined && r.content !== null) this.content(r.content, `${at}.content`);
      this.optional(r.extra, `${at}.extra`, "object");
      if (r.subagent_trajectory_ref !== undefined && r.subagent_trajectory_ref !== null) {
        if (!Array.isArray(r.subagent_trajectory_ref)) this.fail(`${at}.subagent_trajectory_ref`, "must be an array");
        else
          r.subagent_trajectory_ref.forEach((ref, j) => {
            this.object(ref, `${at}.subagent_trajectory_ref[${j}]`, REF_KEYS, []);
          });
      }
    });
  }

  /** A message or observation content: a string, or an array of content parts. */
  content(value: unknown, path: string): void {
    if (typeof value === "string") return;
    if (!Array.isArray(value)) {
      this.fail(path, "must be a string or an array of content parts");
      return;
    }
    value.forEach((part, i) => {
      const at = `${path}[${i}]`;
      if (!this.object(part, at, ["type", "text", "source"], ["type"])) return;
      if (part.type === "text") {
        if (typeof part.text !== "string") this.fail(`${at}.text`, "is required on a text part");
        if (part.source !== undefined && part.source !== null) this.fail(`${at}.source`, "is not allowed on a text part");
      } else if (part.type === "image" || part.type === "audio") {
        if (part.text !== undefined && part.text !== null) this.fail(`${at}.text`, `is not allowed on an ${part.type} part`);
        const keys = part.type === "image" ? ["media_type", "path"] : ["media_type", "path", "duration_sec"];
        if (!this.object(part.source, `${at}.source`, keys, ["media_type", "path"])) return;
        const types = part.type === "image" ? ATIF_IMAGE_TYPES : AUDIO_TYPES;
        if (!types.has(part.source.media_type as string)) this.fail(`${at}.source.media_type`, `must be one of ${[...types].join(", ")}`);
        this.optional(part.source.path, `${at}.source.path`, "string");
      } else this.fail(`${at}.type`, "must be text, image or audio");
    });
  }

  metrics(value: unknown, path: string): void {
    if (!this.object(value, path, METRICS_KEYS, [])) return;
    for (const k of ["prompt_tokens", "completion_tokens", "cached_tokens"]) this.optional(value[k], `${path}.${k}`, "integer");
    this.optional(value.cost_usd, `${path}.cost_usd`, "number");
    for (const k of ["prompt_token_ids", "completion_token_ids", "logprobs"]) this.optional(value[k], `${path}.${k}`, "array");
    this.optional(value.extra, `${path}.extra`, "object");
  }

  finalMetrics(value: unknown, path: string): void {
    if (!this.object(value, path, FINAL_KEYS, [])) return;
    for (const k of ["total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_steps"])
      this.optional(value[k], `${path}.${k}`, "integer");
    this.optional(value.total_cost_usd, `${path}.total_cost_usd`, "number");
    this.optional(value.extra, `${path}.extra`, "object");
  }
}

/** Checks a parsed ATIF document against the RFC's rules; an empty list means it conforms. */
export function validateAtif(doc: unknown): AtifProblem[] {
  const checker = new Checker();
  checker.trajectory(doc, "$");
  return checker.problems;
}
