import { readFileSync } from "node:fs";
import { SHIPPED_PRICES } from "../accounting/price-table-data.ts";
import { overlayPrices, type PriceTable } from "../accounting/price-table.ts";
import { TranscriptStoreError } from "../errors.ts";

/**
 * The shipped price table with a file's prices laid over it (`usage --prices <file>`): JSON
 * `{date, models: {<model id>: {input, output, cacheRead?, cacheWrite?}}}`, US dollars per million
 * tokens. A file that cannot be read or is no such table is `INVALID_CONFIG`.
 */
export function loadPriceTable(path: string): PriceTable {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new TranscriptStoreError("INVALID_CONFIG", `price table ${path}: ${(err as Error).message}`, { path, cause: err });
  }
  const table = overlayPrices(SHIPPED_PRICES, value);
  if (typeof table === "string") throw new TranscriptStoreError("INVALID_CONFIG", `price table ${path}: ${table}`, { path });
  return table;
}
