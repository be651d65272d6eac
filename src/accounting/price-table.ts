import { isRecord } from "../format/types.ts";
import type { UsageCost, UsageRow } from "./usage-rows.ts";

/** Prices of one model in US dollars per million tokens; `tiers` apply above an input size. */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** Higher prices for a call whose prompt (input + cache read + cache write) is above `inputTokensAbove`. */
  tiers?: Array<{ inputTokensAbove: number; input: number; output: number; cacheRead?: number; cacheWrite?: number }>;
}

/** A dated price table: model id → prices. */
export interface PriceTable {
  /** When the prices were taken (YYYY-MM-DD). */
  date: string;
  /** Where they were taken from. */
  source?: string;
  models: Record<string, ModelPrice>;
}

/** The price of `model`: its id as written, else without a `-YYYYMMDD` date or a `provider/` prefix; null when unknown. */
export function priceOf(table: PriceTable, model: string | null): ModelPrice | null {
  if (model === null) return null;
  const names = [model, model.replace(/-\d{8}$/, ""), model.replace(/^[^/]+\//, "").replace(/-\d{8}$/, "")];
  for (const name of names) {
    const price = Object.hasOwn(table.models, name) ? table.models[name] : undefined;
    if (price !== undefined) return price;
  }
  return null;
}

/** The cost of a row's tokens at `price` (the tier its prompt size reaches). */
export function costAt(row: UsageRow, price: ModelPrice): UsageCost {
  const prompt = row.tokens.input + row.tokens.cacheRead + row.tokens.cacheWrite;
  let p: Omit<ModelPrice, "tiers"> = price;
  for (const tier of price.tiers ?? []) if (prompt > tier.inputTokensAbove) p = tier;
  const cost: UsageCost = {
    input: (row.tokens.input * p.input) / 1e6,
    output: (row.tokens.output * p.output) / 1e6,
    cacheRead: (row.tokens.cacheRead * (p.cacheRead ?? 0)) / 1e6,
    cacheWrite: (row.tokens.cacheWrite * (p.cacheWrite ?? 0)) / 1e6,
    total: 0,
  };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  return cost;
}

/**
 * Rows whose cost the agent did not record (`unpriced`: an imported Claude Code or Codex call, a
 * usage without `cost`) priced from `table`: the row gets the cost and `pricedBy` (the table's
 * date); a model the table does not know stays `unpriced` (shown as such, never as $0). Rows with a
 * recorded cost are returned as they are. Pure.
 */
export function priceRows<T extends UsageRow>(rows: readonly T[], table: PriceTable): T[] {
  return rows.map((row) => {
    if (row.unpriced !== true) return row;
    const price = priceOf(table, row.model);
    if (price === null) return row;
    const { unpriced: _unpriced, ...rest } = row;
    return { ...rest, cost: costAt(row, price), pricedBy: `price table ${table.date}` } as T;
  });
}

/**
 * A price table read from an override file's JSON (`{date, models: {<id>: {input, output, cacheRead?,
 * cacheWrite?, tiers?}}}`) laid over `base`: the models it names replace the base's. A value that
 * is not such a table is an error message (a string).
 */
export function overlayPrices(base: PriceTable, value: unknown): PriceTable | string {
  if (!isRecord(value) || !isRecord(value.models)) return "not a price table: expected {date, models: {<model>: {input, output}}}";
  const models: Record<string, ModelPrice> = { ...base.models };
  for (const [id, p] of Object.entries(value.models)) {
    if (!isRecord(p) || typeof p.input !== "number" || typeof p.output !== "number")
      return `model ${JSON.stringify(id)}: input and output must be numbers (US dollars per million tokens)`;
    for (const k of ["cacheRead", "cacheWrite"])
      if (p[k] !== undefined && typeof p[k] !== "number") return `model ${JSON.stringify(id)}: ${k} must be a number`;
    models[id] = p as unknown as ModelPrice;
  }
  const date = typeof value.date === "string" ? value.date : base.date;
  return { date, source: typeof value.source === "string" ? value.source : "override file", models };
}
