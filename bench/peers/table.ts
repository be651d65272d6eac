// The peers table: one row per measure, medians over the runs, each column's ratio to the raw baseline of its own runtime
// (raw Node for us and pi, raw Bun for omp) measured in the same runs.
import { median } from "../stats.ts";
import { BASELINE, type Impl } from "./spawn.ts";
import type { Result } from "./workloads.ts";

/** Every child's answer of every run, by job key ("W1", "W4-eager", …) and implementation. */
export type Samples = Record<string, Partial<Record<Impl, (Result & { failed?: string })[]>>>;

/** One printed row: which job and metric each column reads (null: "—" with a note). */
export interface RowSpec {
  label: string;
  unit: "ms" | "µs" | "MB";
  metric: "ms" | "imageP50Us" | "textP50Us" | "rssMB";
  /** Job key per column; raw is the baseline the ratios divide by. */
  jobs: Partial<Record<Impl, string>>;
  /** Why a column is "—" (a peer without the API, or one mode only). */
  notes?: Partial<Record<Impl, string>>;
}

export interface Cell {
  median: number | null;
  ratio: number | null;
  text: string;
}

const COLUMNS: Impl[] = ["raw", "pi", "us", "raw-bun", "omp"];
export const HEADERS: Record<Impl, string> = { raw: "raw Node", pi: "pi", us: "us", "raw-bun": "raw Bun", omp: "omp (Bun)" };

function num(v: number): string {
  return v >= 100 ? Math.round(v).toLocaleString("en-US") : v >= 10 ? v.toFixed(1) : v.toFixed(2);
}

/** The median and ratio cell of one column, or why there is none. */
export function cell(samples: Samples, row: RowSpec, impl: Impl, base: number | null): Cell {
  const key = row.jobs[impl];
  const runs = key === undefined ? undefined : samples[key]?.[impl];
  if (key === undefined || runs === undefined) return { median: null, ratio: null, text: `— ${row.notes?.[impl] ?? ""}`.trim() };
  const unsupported = runs.find((r) => r.unsupported)?.unsupported;
  if (unsupported) return { median: null, ratio: null, text: `— (${unsupported})` };
  const values = runs.map((r) => r[row.metric]).filter((v): v is number => typeof v === "number");
  if (values.length === 0) return { median: null, ratio: null, text: `failed: ${runs.find((r) => r.failed)?.failed ?? "no value"}` };
  const m = median(values);
  const ratio = base === null || BASELINE[impl] === null ? null : m / base;
  const failures = runs.length - values.length;
  const text =
    `${num(m)} ${row.unit}${ratio === null ? "" : ` (${num(ratio)}×)`}` +
    `${values.length < runs.length ? ` [${failures} of ${runs.length} runs failed]` : ""}`;
  return { median: m, ratio, text };
}

/** The markdown table and the same figures as data. */
export function renderTable(samples: Samples, rows: RowSpec[]): { markdown: string; cells: Record<string, Record<Impl, Cell>> } {
  const lines = [`| workload | ${COLUMNS.map((c) => HEADERS[c]).join(" | ")} |`, `|---|${COLUMNS.map(() => "---").join("|")}|`];
  const cells: Record<string, Record<Impl, Cell>> = {};
  for (const row of rows) {
    const bases = new Map<Impl, number | null>();
    for (const c of COLUMNS) if (BASELINE[c] === null) bases.set(c, cell(samples, row, c, null).median);
    const byImpl = Object.fromEntries(COLUMNS.map((c) => [c, cell(samples, row, c, bases.get(BASELINE[c] ?? c) ?? null)])) as Record<
      Impl,
      Cell
    >;
    cells[row.label] = byImpl;
    lines.push(`| ${row.label} | ${COLUMNS.map((c) => byImpl[c].text).join(" | ")} |`);
  }
  return { markdown: lines.join("\n"), cells };
}
