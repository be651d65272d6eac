import { isRecord, type RawRecord } from "../format/types.ts";

/** Token counts of one model call (pi-ai's `Usage`, as pi and omp write it). */
export interface UsageTokens {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** As written; when absent, the sum of the four counts (pi's own definition). */
  totalTokens: number;
}

/** Cost of one model call, in the currency the agent priced it in (pi: US dollars). */
export interface UsageCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** As written; when absent, the sum of the four parts. */
  total: number;
}

/** Where a usage row came from (`token_count`: a Codex event kept whole by import). */
export type UsageSource = "message" | "usage" | "compaction" | "branch_summary" | "token_count";

/** One row of the usage ledger: one model call recorded in a session. */
export interface UsageRow {
  sessionId: string;
  cwd: string;
  /** Unique in its session: the entry id, else `#<line>` (a v1 file has no ids). */
  key: string;
  /** The entry's time (ISO 8601), or null when it has none that parses. */
  timestamp: string | null;
  provider: string | null;
  model: string | null;
  source: UsageSource;
  /** A `usage` entry's `kind` (e.g. `cache_warm`); null for the others. */
  kind: string | null;
  tokens: UsageTokens;
  cost: UsageCost;
  /**
   * Set when the agent recorded no cost for the call (an imported Claude Code or Codex call, a usage
   * without `cost`): `cost` is 0 until a price table prices it (`priceRows`); reports show it unpriced.
   */
  unpriced?: true;
  /** Set when `cost` comes from a price table (its date), not from the agent. */
  pricedBy?: string;
}

/** A usage value that is not a number (or is negative): reported; the row counts it as 0. */
export interface UsageProblem {
  sessionId: string;
  key: string;
  /** 1-based line (or row) number. */
  line: number;
  /** The field, e.g. `usage.cost.total`. */
  field: string;
  reason: string;
}

const TOKEN_FIELDS = ["input", "output", "cacheRead", "cacheWrite"] as const;

/** A count or amount: a finite number ≥ 0; absent is 0 (not a problem); anything else a problem. */
function amount(record: RawRecord, key: string, field: string, problems: string[][]): number {
  const value = record[key];
  if (value === undefined || value === null) return 0;
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  problems.push([`${field}.${key}`, `not a non-negative number: ${JSON.stringify(value)?.slice(0, 80) ?? String(value)}`]);
  return 0;
}

/** The record an imported entry keeps whole from `format`'s transcript (its `foreign.record`), or null. */
function foreignRecord(record: RawRecord, format: string): RawRecord | null {
  const f = record.foreign;
  return isRecord(f) && f.format === format && isRecord(f.record) ? f.record : null;
}

/** A Codex token count's numbers (`input_tokens` includes the cached ones, `output_tokens` the reasoning ones). */
function codexTokens(u: unknown): RawRecord | null {
  if (!isRecord(u)) return null;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);
  const input = n(u.input_tokens);
  const cached = Math.min(n(u.cached_input_tokens), input);
  const output = n(u.output_tokens);
  return { input: input - cached, cacheRead: cached, output, cacheWrite: 0, totalTokens: n(u.total_tokens) || input + output };
}

/**
 * The usage of a Codex `token_count` event kept whole by import: its `last_token_usage` (else the
 * growth of `total_token_usage` since the previous event), once per call: an event whose cumulative
 * total did not move (Codex writes some twice) is no new call. Follows `model.codexTotal`.
 */
function codexUsageOf(record: RawRecord, model: ModelState): unknown {
  const kept = foreignRecord(record, "codex");
  const payload = kept !== null && kept.type === "event_msg" && isRecord(kept.payload) ? kept.payload : null;
  if (payload === null || payload.type !== "token_count" || !isRecord(payload.info)) return null;
  const total = codexTokens(payload.info.total_token_usage);
  const totalSum = total === null ? null : Number(total.totalTokens);
  if (totalSum !== null && totalSum === model.codexTotal) return null;
  const previous = model.codexTotal ?? 0;
  if (totalSum !== null) model.codexTotal = totalSum;
  const last = codexTokens(payload.info.last_token_usage);
  if (last !== null) return last;
  if (total === null || totalSum === null || totalSum <= previous) return null;
  // no last_token_usage: the growth of the total, all of it counted as input
  return { input: totalSum - previous, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: totalSum - previous };
}

/** The usage of one record, if it carries one, and where it came from. */
function usageOf(
  record: RawRecord,
  model: ModelState,
): { usage: unknown; source: UsageSource; provider: unknown; model: unknown; field: string } | null {
  const codex = codexUsageOf(record, model);
  if (codex !== null) return { usage: codex, source: "token_count", provider: undefined, model: undefined, field: "foreign.record" };
  if (record.type === "message" && isRecord(record.message) && record.message.usage !== undefined) {
    const m = record.message;
    return { usage: m.usage, source: "message", provider: m.provider, model: m.model, field: "message.usage" };
  }
  if (record.type === "usage")
    return { usage: record.usage, source: "usage", provider: record.provider, model: record.model, field: "usage" };
  if ((record.type === "compaction" || record.type === "branch_summary") && record.usage !== undefined)
    return { usage: record.usage, source: record.type, provider: record.provider, model: record.model, field: "usage" };
  return null;
}

/** What a session's earlier lines say about the model in use (`model_change`, the header). */
export interface ModelState {
  provider: string | null;
  model: string | null;
  /** The last cumulative total of an imported Codex rollout's `token_count` events. */
  codexTotal?: number;
}

/**
 * Follows the model in use: the header's `provider`/`modelId`, then each `model_change`; in a
 * session imported from Codex, its kept `session_meta` (`model_provider`) and `turn_context` (`model`).
 */
export function followModel(state: ModelState, record: RawRecord): void {
  const codex = foreignRecord(record, "codex");
  if (codex !== null && isRecord(codex.payload)) {
    if (codex.type === "session_meta" && typeof codex.payload.model_provider === "string") state.provider = codex.payload.model_provider;
    if (codex.type === "turn_context" && typeof codex.payload.model === "string") state.model = codex.payload.model;
  }
  if (record.type === "session" || record.type === "model_change") {
    if (typeof record.provider === "string") state.provider = record.provider;
    const model = record.modelId ?? record.model;
    if (typeof model === "string") state.model = model;
  }
}

/** A timestamp that parses, normalized to ISO 8601; null otherwise. */
function timeOf(value: unknown): string | null {
  if (typeof value !== "string" && typeof value !== "number") return null;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? null : time.toISOString();
}

/**
 * The usage row of one record (an assistant message's `usage`, a `usage` entry, a compaction's or
 * branch summary's `usage`, a Codex `token_count` event kept by import), or null when it carries
 * none. No I/O; `at.model` is followed (a Codex rollout's running total). Malformed values (a
 * string, a negative number, a `usage` that is not an object) are returned as problems and count 0.
 * A row whose cost the agent did not record is marked `unpriced` (see `priceRows`).
 */
export function usageRowOf(
  record: RawRecord,
  at: { sessionId: string; cwd: string; line: number; model: ModelState },
): { row: UsageRow | null; problems: UsageProblem[] } {
  const found = usageOf(record, at.model);
  if (found === null) return { row: null, problems: [] };
  const key = typeof record.id === "string" && record.id !== "" ? record.id : `#${at.line}`;
  const raw: string[][] = [];
  const problem = (field: string, reason: string): UsageProblem => ({ sessionId: at.sessionId, key, line: at.line, field, reason });
  if (!isRecord(found.usage)) {
    return { row: null, problems: [problem(found.field, `not an object: ${JSON.stringify(found.usage)?.slice(0, 80)}`)] };
  }
  const usage = found.usage;
  const tokens: UsageTokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
  for (const k of TOKEN_FIELDS) tokens[k] = amount(usage, k, found.field, raw);
  tokens.totalTokens =
    usage.totalTokens === undefined
      ? tokens.input + tokens.output + tokens.cacheRead + tokens.cacheWrite
      : amount(usage, "totalTokens", found.field, raw);
  const cost: UsageCost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
  if (usage.cost !== undefined && usage.cost !== null && !isRecord(usage.cost)) {
    raw.push([`${found.field}.cost`, `not an object: ${JSON.stringify(usage.cost)?.slice(0, 80)}`]);
  } else if (isRecord(usage.cost)) {
    for (const k of TOKEN_FIELDS) cost[k] = amount(usage.cost, k, `${found.field}.cost`, raw);
    cost.total =
      usage.cost.total === undefined
        ? cost.input + cost.output + cost.cacheRead + cost.cacheWrite
        : amount(usage.cost, "total", `${found.field}.cost`, raw);
  }
  const row: UsageRow = {
    sessionId: at.sessionId,
    cwd: at.cwd,
    key,
    timestamp: timeOf(record.timestamp),
    provider: typeof found.provider === "string" ? found.provider : at.model.provider,
    model: typeof found.model === "string" ? found.model : at.model.model,
    source: found.source,
    kind: found.source === "usage" && typeof record.kind === "string" ? record.kind : null,
    tokens,
    cost,
  };
  // an imported call carries no cost of the agent's (the importer writes none it could know): priced later, or unpriced
  if (!isRecord(usage.cost) || isRecord(record.foreign)) row.unpriced = true;
  return { row, problems: raw.map(([field, reason]) => problem(field!, reason!)) };
}
