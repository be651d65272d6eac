import { resolve } from "node:path";
import { BYTE_KINDS } from "../../accounting/line-kinds.ts";
import type { SpaceGrouping, SpaceTotals } from "../../accounting/du-report.ts";
import { parseTimeBound, type UsageGroup, type UsageGrouping } from "../../accounting/usage-report.ts";
import { accountStore, storeSpace, storeUsage, type AccountingOptions } from "../../maintenance/store-accounting.ts";
import { spaceTotals } from "../../accounting/du-report.ts";
import type { StoreWarning } from "../../errors.ts";
import { formatBytes, formatTable, printWarning, storeOptions, UsageError, type Command, type CommandContext } from "../context.ts";
import { loadPriceTable } from "../../maintenance/price-file.ts";
import { startProgress } from "../progress.ts";
import { noteEncryptedSkipped } from "../encrypted-notice.ts";
import { terminalText } from "../terminal-text.ts";

/**
 * Runs `run` with the accounting options of the CLI's store: `onSession` stops the command between
 * sessions on Ctrl-C; what cannot be read is a `warning:` line (unless `quiet`: `stats` printed its
 * own) and makes `incomplete` true (the command exits 1). Files that are not sessions are left out.
 */
async function withStore<T>(
  ctx: CommandContext,
  name: string,
  run: (options: AccountingOptions) => Promise<T>,
  quiet = false,
): Promise<{ result: T; incomplete: boolean }> {
  const progress = startProgress(ctx.io, 0, "reading", true);
  const print = printWarning(ctx.io);
  let incomplete = false;
  const onWarning = (w: StoreWarning) => {
    if (w.code === "BAD_HEADER") return;
    if (w.code === "PERSISTENCE_FAILED") incomplete = true;
    if (!quiet) print(w);
  };
  let result: T;
  try {
    result = await run({ ...storeOptions(ctx), root: ctx.root, onWarning, onSession: (id) => progress.tick(id) });
  } finally {
    progress.stop();
  }
  if (!quiet) noteEncryptedSkipped(ctx, name);
  return { result, incomplete };
}

/** A positive whole number option, or undefined when absent. */
function countOption(ctx: CommandContext, name: string): number | undefined {
  const text = ctx.values[name] as string | undefined;
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`--${name} must be a whole number ≥ 1`);
  return Number(text);
}

/** One of `allowed`, or the default. */
function choice<T extends string>(ctx: CommandContext, name: string, allowed: readonly T[], fallback: T): T {
  const value = (ctx.values[name] as string | undefined) ?? fallback;
  if (!allowed.includes(value as T)) throw new UsageError(`--${name} must be one of ${allowed.join(", ")}`);
  return value as T;
}

const KIND_LABELS: Record<(typeof BYTE_KINDS)[number], string> = {
  text: "text",
  toolCalls: "tool calls",
  toolResults: "tool results",
  thinking: "thinking",
  inlineImages: "inline images",
  other: "other",
  malformed: "malformed",
  oversized: "oversized lines",
};

/** The lines `du` and `stats` print for a store's totals. */
export function spaceTotalsText(t: SpaceTotals): string {
  const kinds = BYTE_KINDS.filter((k) => t.kinds[k] > 0 || k === "text").map((k) => `${KIND_LABELS[k]} ${formatBytes(t.kinds[k])}`);
  return (
    `by kind:  ${kinds.join(", ")}\n` +
    `blob use: ${t.referencedBlobs} referenced (${formatBytes(t.referencedBlobBytes)}), ` +
    `${t.unreferencedBlobs} unreferenced (${formatBytes(t.unreferencedBlobBytes)})` +
    (t.missingBlobs > 0 ? `, ${t.missingBlobs} missing` : "") +
    `\nbeside:   artifacts ${formatBytes(t.artifacts)}, quarantine ${formatBytes(t.quarantine)}, backups ${formatBytes(t.backups)}` +
    (t.trash ? `, trash ${formatBytes(t.trash)}` : "") +
    (t.spools ? `, unbundle spools ${formatBytes(t.spools)}` : "")
  );
}

/** `stats`' share of accounting: the totals of every session of the store, by kind. */
export async function storeSpaceTotals(ctx: CommandContext): Promise<SpaceTotals> {
  const { spaces, blobSizes } = (await withStore(ctx, "du", accountStore, true)).result;
  return spaceTotals(spaces, blobSizes);
}

export const duCommand: Command = {
  name: "du",
  readOnly: true,
  summary:
    "space per session or cwd, largest first: message text, tool calls and results, thinking, inline images, " +
    "blobs exclusive to it and shared, artifacts, quarantine and backups",
  usage: "du [--by session|cwd] [--top N]",
  options: { by: { type: "string" }, top: { type: "string" } },
  maxArgs: 0,
  async run(ctx) {
    const by = choice<SpaceGrouping>(ctx, "by", ["session", "cwd"], "session");
    const top = countOption(ctx, "top");
    const { result, incomplete } = await withStore(ctx, "du", (options) => storeSpace({ ...options, by, top }));
    const { rows, totals } = result;
    if (ctx.json) {
      for (const row of rows) ctx.emit({ type: by, ...row }, "");
      ctx.emit({ type: "totals", ...totals, incomplete }, "");
      return incomplete ? 1 : 0;
    }
    const size = (n: number) => (n === 0 ? "-" : formatBytes(n));
    const cells = rows.map((r) => [
      formatBytes(r.total),
      size(r.kinds.text),
      size(r.kinds.toolCalls + r.kinds.toolResults),
      size(r.kinds.thinking),
      size(r.kinds.inlineImages),
      size(r.kinds.other + r.kinds.malformed + r.kinds.oversized),
      size(r.exclusiveBlobBytes),
      size(r.sharedBlobBytes),
      size(r.artifacts),
      size(r.quarantine + r.backups),
      by === "session" ? `${r.id}  ${r.cwd}` : `${r.cwd} (${r.sessions})`,
    ]);
    const heading = ["total", "text", "tools", "thinking", "images", "other", "blobs", "shared", "artifacts", "q+bak", by];
    const fit =
      ctx.io.columns === undefined ? undefined : { width: ctx.io.columns, shrink: [{ column: 10, keep: "end" as const, min: 12 }] };
    ctx.io.stdout(`${formatTable(heading, cells, fit)}\n`);
    ctx.io.stdout(
      `\n${totals.sessions} session(s), ${formatBytes(totals.sessionBytes)} in sessions\n${spaceTotalsText(totals)}\n` +
        "(total: what removing it frees; blobs: only it references them; shared: others reference them too)\n",
    );
    return incomplete ? 1 : 0;
  },
};

function tokens(n: number): string {
  if (n < 10_000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)}K`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** A cost in dollars and cents: one fixed precision for the whole column, as ccusage prints it. */
function cost(n: number): string {
  return `$${n.toFixed(2)}`;
}

/** The last column's cells (the cost) padded on the left to one width: the cents line up. */
function alignLast(rows: string[][]): string[][] {
  const width = Math.max(...rows.map((r) => r.at(-1)!.length));
  return rows.map((r) => [...r.slice(0, -1), r.at(-1)!.padStart(width)]);
}

/** A group's cost: `unpriced` when no call has a price, else the sum and how many calls it leaves out. */
function costCell(g: UsageGroup): string {
  if (g.unpricedCalls === 0) return cost(g.cost.total);
  if (g.unpricedCalls === g.calls) return "unpriced";
  return `${cost(g.cost.total)} +${g.unpricedCalls} unpriced`;
}

function usageCells(g: UsageGroup): string[] {
  return [
    g.key,
    g.deletedCalls > 0 ? `${g.calls} (${g.deletedCalls} deleted)` : String(g.calls),
    tokens(g.tokens.input),
    tokens(g.tokens.output),
    tokens(g.tokens.cacheRead),
    tokens(g.tokens.cacheWrite),
    tokens(g.tokens.totalTokens),
    costCell(g),
  ];
}

export const usageCommand: Command = {
  name: "usage",
  readOnly: true,
  summary:
    "tokens and cost of the model calls recorded in sessions (deleted sessions' rows included, flagged), " +
    "by session, model, UTC day or cwd; --since/--until: 30d, 12h, 2w or a date",
  usage: "usage [--by session|model|day|cwd] [--since 30d] [--until <date|duration>] [--prices <file>]",
  options: { by: { type: "string" }, since: { type: "string" }, until: { type: "string" }, prices: { type: "string" } },
  maxArgs: 0,
  async run(ctx) {
    const by = choice<UsageGrouping>(ctx, "by", ["session", "model", "day", "cwd"], "session");
    const now = new Date();
    const bound = (name: string) => {
      const text = ctx.values[name] as string | undefined;
      if (text === undefined) return undefined;
      const at = parseTimeBound(text, now);
      if (at === null)
        throw new UsageError(terminalText`--${name} must be a duration (30d, 12h, 2w, 90m) or a date, got ${JSON.stringify(text)}`);
      return at;
    };
    const since = bound("since");
    const until = bound("until");
    // calls whose cost the agent did not record are priced from the shipped table, or from it with this file laid over it
    const pricesFile = ctx.values.prices as string | undefined;
    const prices = pricesFile === undefined ? undefined : loadPriceTable(resolve(ctx.io.cwd, pricesFile));
    const { result: report, incomplete } = await withStore(ctx, "usage", (options) =>
      storeUsage({ ...options, by, since, until, ...(prices === undefined ? {} : { prices }) }),
    );
    for (const p of report.problems)
      ctx.io.stderr(terminalText`warning: session ${p.sessionId} entry ${p.key} (line ${p.line}): ${p.field} ${p.reason}; counted as 0\n`);
    for (const p of report.ledgerProblems) ctx.io.stderr(terminalText`warning: usage ledger line ${p.line}: ${p.reason} (${p.path})\n`);
    if (ctx.json) {
      for (const g of report.groups) ctx.emit({ type: "usage", by, ...g }, "");
      ctx.emit(
        {
          type: "total",
          by,
          ...report.total,
          copies: report.copies,
          since: since?.toISOString() ?? null,
          until: until?.toISOString() ?? null,
        },
        "",
      );
      for (const p of report.problems) ctx.emit({ type: "problem", ...p }, "");
      for (const p of report.ledgerProblems) ctx.emit({ type: "ledger-problem", ...p }, "");
      return incomplete ? 1 : 0;
    }
    const heading = [by, "calls", "input", "output", "cache read", "cache write", "tokens", "cost"];
    const fit =
      ctx.io.columns === undefined ? undefined : { width: ctx.io.columns, shrink: [{ column: 0, keep: "end" as const, min: 12 }] };
    ctx.io.stdout(`${formatTable(heading, alignLast([...report.groups.map(usageCells), usageCells(report.total)]), fit)}\n`);
    if (report.copies > 0) ctx.io.stdout(`(${report.copies} call(s) copied into forks counted once, in the session that made them)\n`);
    return incomplete ? 1 : 0;
  },
};
