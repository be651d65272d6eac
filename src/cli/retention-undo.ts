import { resolve } from "node:path";
import type { Readable } from "node:stream";
import { TranscriptStoreError } from "../errors.ts";
import type { TrashEntry } from "../lifecycle/lifecycle-driver.ts";
import type { Lifecycle } from "../lifecycle/lifecycle.ts";
import { newPruneId, type PruneRecord, readPrunes, recordPrune } from "../lifecycle/prune-log.ts";
import { defaultRoot } from "../session/paths.ts";
import { catchUpIndex } from "../search/index-notify.ts";
import { type CommandContext, formatBytes, printWarning } from "./context.ts";
import { indexLocationOf } from "./index-location.ts";
import { terminalText } from "./terminal-text.ts";

/** The store root the prune log lives under. */
function rootOf(ctx: CommandContext): string {
  return ctx.root !== undefined ? resolve(ctx.root) : defaultRoot();
}

/** Records a prune that trashed `entries` (nothing when none): returns its id, or null. */
export function logPrune(ctx: CommandContext, entries: readonly TrashEntry[], at: Date): string | null {
  if (entries.length === 0) return null;
  const pruneId = newPruneId(at);
  recordPrune(rootOf(ctx), {
    pruneId,
    at: at.toISOString(),
    trashIds: entries.map((e) => e.trashId),
    sessionIds: entries.map((e) => e.sessionId),
  });
  return pruneId;
}

/** Trash id → the prune that put it there (for `trash`). */
export function pruneOfTrash(ctx: CommandContext): Map<string, string> {
  const by = new Map<string, string>();
  for (const p of readPrunes(rootOf(ctx))) for (const id of p.trashIds) by.set(id, p.pruneId);
  return by;
}

/** Whether `arg` names a recorded prune (`restore <prune id>`). */
export function findPrune(ctx: CommandContext, ref: string | "last"): PruneRecord | null {
  const prunes = readPrunes(rootOf(ctx));
  return (ref === "last" ? prunes.at(-1) : prunes.find((p) => p.pruneId === ref)) ?? null;
}

/**
 * The trash entries of a prune that are still in the trash (restored or purged ones are gone):
 * what restoring it brings back. None left: `SESSION_NOT_FOUND`.
 */
export async function entriesOfPrune(life: Lifecycle, prune: PruneRecord): Promise<TrashEntry[]> {
  const ids = new Set(prune.trashIds);
  const left = (await life.listTrash()).filter((e) => ids.has(e.trashId));
  if (left.length === 0)
    throw new TranscriptStoreError(
      "SESSION_NOT_FOUND",
      `Nothing of prune ${prune.pruneId} (${prune.trashIds.length} session(s)) is in the trash any more: restored or purged`,
    );
  return left;
}

/**
 * Asks a yes/no question on the terminal (stderr), reading one line from stdin; true for y/yes.
 * Only ever called when stdin and stderr are terminals: a pipe is never asked.
 */
export function confirm(ctx: CommandContext, question: string): Promise<boolean> {
  ctx.io.stderr(`${question} [y/N] `);
  return readLine(ctx.io.stdin).then((answer) => /^\s*y(es)?\s*$/i.test(answer));
}

/** One line from `stdin` (or what came before its end), then stdin is left paused. */
function readLine(stdin: Readable): Promise<string> {
  return new Promise((done) => {
    let text = "";
    const finish = () => {
      stdin.off("data", onData);
      stdin.off("end", finish);
      stdin.pause();
      (stdin as Readable & { unref?: () => void }).unref?.();
      done(text.split(/\r?\n|\r/)[0] ?? "");
    };
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString();
      if (/[\r\n]/.test(text)) finish();
    };
    stdin.on("data", onData);
    stdin.on("end", finish);
    stdin.resume();
  });
}

/** A trash entry as a record (`trash`, `purge`, `prune --json`). */
export function trashRecord(type: string, e: TrashEntry) {
  return { type, trashId: e.trashId, id: e.sessionId, cwd: e.cwd, from: e.from, trashedAt: e.trashedAt.toISOString(), bytes: e.bytes };
}

/**
 * The trash entries past retention (`trash.retainDays`), purged after a prune (with `--dry-run`,
 * listed), one line each, as restic's `forget --prune` reports what it removes; the prune's summary
 * line says how many and how much.
 */
export async function expireTrash(ctx: CommandContext, life: Lifecycle, dryRun: boolean) {
  const retainDays = life.config().trash.retainDays;
  const report = await life.purge({ dryRun });
  // the store's index forgets the purged sessions now, not at the next search (issue 32, #10)
  if (!dryRun && report.purged.length > 0 && ctx.store === undefined) await catchUpIndex(indexLocationOf(ctx), printWarning(ctx.io));
  const verb = dryRun ? "would purge" : "purged";
  for (const e of report.purged)
    ctx.emit(trashRecord(dryRun ? "would-purge" : "purged", e), terminalText`${verb} ${e.trashId} (${formatBytes(e.bytes)}, expired)`);
  const freed = formatBytes(report.bytes);
  const text = `trash past its ${retainDays}-day retention: ${verb} ${report.purged.length} entr(y/ies), ${freed} freed`;
  return { retainDays, purged: report.purged.length, bytes: report.bytes, text };
}
