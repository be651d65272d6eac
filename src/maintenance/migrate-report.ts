/**
 * The migrate report, declared once. `MIGRATE_COUNTERS` lists every number a file's report counts:
 * `migrateFile` fills them, `addCounters` sums them (a write pass into its file's report, the
 * files into the totals), and the CLI prints them from here, in this order (text and JSON). Adding
 * a counter is one entry below plus the code that counts it.
 *
 * In the texts, `#` stands for the count (formatted as a size for `bytes` counters). A counter is
 * printed on a file's line as `file` (omitted when zero unless `fileZero`), and on the totals line
 * as `total` (null: not totalled; omitted when zero unless `totalZero`).
 */
/**
 * `continued`: the store copy of an import holds everything the import would write and more (it
 * was continued in the store): left alone. `updated`: the source grew since the last import while
 * the store copy did not: brought up to date. `conflict`: both gained entries: the store copy is
 * left untouched and the file fails with `IMPORT_CONFLICT`.
 */
export type MigrateStatus = "migrated" | "imported" | "updated" | "current" | "continued" | "planned" | "conflict" | "failed";

export interface CounterSpec {
  name: string;
  bytes?: boolean;
  file: string;
  fileZero: boolean;
  total: string | null;
  totalZero: boolean;
}

export const MIGRATE_COUNTERS = [
  { name: "bytesBefore", bytes: true, file: "#", fileZero: true, total: "; #", totalZero: true },
  { name: "bytesAfter", bytes: true, file: "→#", fileZero: true, total: " → #", totalZero: true },
  {
    name: "imagesExternalized",
    file: " images #",
    fileZero: true,
    total: "; # image(s) externalized",
    totalZero: true,
  },
  // Image payloads that are not decodable base64: kept inline and whole (never truncated).
  { name: "imagesKeptInline", file: " (# not base64, kept inline)", fileZero: false, total: null, totalZero: false },
  { name: "blobsNew", file: " blobs # new", fileZero: true, total: ", # new blob(s)", totalZero: true },
  { name: "blobsDeduplicated", file: "/# dedup", fileZero: true, total: ", # deduplicated", totalZero: true },
  // Blobs already in the store that failed their re-hash and were rewritten from this file's bytes.
  {
    name: "blobsRepaired",
    file: "/# repaired",
    fileZero: false,
    total: ", # corrupt blob(s) repaired",
    totalZero: false,
  },
  { name: "malformed", file: " malformed #", fileZero: false, total: null, totalZero: false },
  // Lines that held several records glued together, written back one record per line.
  { name: "linesSplit", file: " glued lines split #", fileZero: false, total: null, totalZero: false },
  // Lines a plain writer appended to the file while migrate --in-place replaced it, brought over as written.
  {
    name: "linesCaughtUp",
    file: " lines appended meanwhile kept #",
    fileZero: false,
    total: ", # line(s) appended meanwhile kept",
    totalZero: false,
  },
] as const satisfies readonly CounterSpec[];

export type CounterName = (typeof MIGRATE_COUNTERS)[number]["name"];

/** Every counter of one file's report (see `MIGRATE_COUNTERS`). */
export type MigrateCounters = Record<CounterName, number>;

/** What happened to one file: its counters (see `MIGRATE_COUNTERS`) and these. */
export interface MigrateFileReport extends MigrateCounters {
  source: string;
  target: string;
  status: MigrateStatus;
  fromVersion: number | null;
  entries: number;
  tornTail: boolean;
  /** The backup of the original this run wrote (`backup: true`, in place), when it wrote one. */
  backup?: string;
  error?: { code: string; message: string };
}

/** A report before anything is known: failed, counters at zero; fields in the order JSON shows them. */
export function baseReport(source: string): MigrateFileReport {
  const head = { source, target: source, status: "failed" as const, fromVersion: null, entries: 0 };
  return { ...head, ...zeroCounters(), tornTail: false };
}

/** One file's line of the text output (before its paths). */
export function migrateFileText(r: MigrateFileReport, size: (n: number) => string): string {
  if (r.error !== undefined) return `${r.status}: ${r.error.code} ${r.error.message}`;
  const torn = r.tornTail ? " torn tail repaired" : "";
  return `${r.status} v${r.fromVersion ?? "?"}→v3 ${countersText(r, "file", size)}${torn}`;
}

/** All counters at zero, in declaration order. */
export function zeroCounters(): MigrateCounters {
  const out = {} as MigrateCounters;
  for (const c of MIGRATE_COUNTERS) out[c.name] = 0;
  return out;
}

/** Adds every counter of `from` into `into`; returns `into`. */
export function addCounters<T extends MigrateCounters>(into: T, from: MigrateCounters): T {
  for (const c of MIGRATE_COUNTERS) into[c.name] += from[c.name];
  return into;
}

/** The counters shown in the totals, summed over the files, in declaration order. */
export function totalCounters(reports: readonly MigrateCounters[]): Partial<MigrateCounters> {
  const sum = reports.reduce<MigrateCounters>((acc, r) => addCounters(acc, r), zeroCounters());
  const out: Partial<MigrateCounters> = {};
  for (const c of MIGRATE_COUNTERS) if (c.total !== null) out[c.name] = sum[c.name];
  return out;
}

/**
 * The counters' part of a file line (`where` "file") or of the totals line ("total"); `size`
 * formats a byte count.
 */
export function countersText(counts: Partial<MigrateCounters>, where: "file" | "total", size: (n: number) => string): string {
  let text = "";
  for (const c of MIGRATE_COUNTERS as readonly CounterSpec[]) {
    const template = where === "file" ? c.file : c.total;
    const n = counts[c.name as CounterName];
    if (template === null || n === undefined) continue;
    if (n === 0 && !(where === "file" ? c.fileZero : c.totalZero)) continue;
    text += template.replace("#", c.bytes ? size(n) : String(n));
  }
  return text;
}

/** How the totals count files by status (`#` is the count; omitted when zero unless `zero`). */
const STATUS_TALLIES = [
  { name: "migrated", statuses: ["migrated", "imported", "updated"], text: "# migrated, ", zero: true },
  { name: "current", statuses: ["current"], text: "# already current, ", zero: true },
  { name: "continued", statuses: ["continued"], text: "# continued in the store (left alone), ", zero: false },
  { name: "conflicts", statuses: ["conflict"], text: "# in conflict (store copy left alone), ", zero: false },
  { name: "planned", statuses: ["planned"], text: "# planned, ", zero: true },
  // A conflict is counted once, above; the run still exits 1 for it (see `migrateFailed`).
  { name: "failed", statuses: ["failed"], text: "# failed", zero: true },
] as const satisfies ReadonlyArray<{ name: string; statuses: readonly MigrateStatus[]; text: string; zero: boolean }>;

type TallyName = (typeof STATUS_TALLIES)[number]["name"];
export type MigrateTotals = { type: "totals"; files: number } & Record<TallyName, number> & Partial<MigrateCounters>;

/** The totals record over the files' reports: file count, files by status, then the totalled counters. */
export function migrateTotals(reports: ReadonlyArray<MigrateCounters & { status: MigrateStatus }>): MigrateTotals {
  const totals = { type: "totals", files: reports.length } as MigrateTotals;
  for (const t of STATUS_TALLIES) {
    totals[t.name] = reports.filter((r) => (t.statuses as readonly MigrateStatus[]).includes(r.status)).length;
  }
  return Object.assign(totals, totalCounters(reports));
}

/** Whether the run failed: a file failed or is in conflict. */
export function migrateFailed(totals: MigrateTotals): boolean {
  return totals.failed + totals.conflicts > 0;
}

/** The totals line of the text output. */
export function migrateTotalsText(totals: MigrateTotals, size: (n: number) => string): string {
  let text = `${totals.files} file(s): `;
  for (const t of STATUS_TALLIES) {
    if (totals[t.name] !== 0 || t.zero) text += t.text.replace("#", String(totals[t.name]));
  }
  return text + countersText(totals, "total", size);
}
