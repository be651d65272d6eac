import { TranscriptStoreError } from "../../errors.ts";
import type { TrashEntry } from "../../lifecycle/lifecycle-driver.ts";
import { Lifecycle, type PurgeInfo } from "../../lifecycle/lifecycle.ts";
import { recordDeletedUsage } from "../../maintenance/store-accounting.ts";
import { parseAge, parseSize, type PrunePolicy } from "../../lifecycle/retention-config.ts";
import type { SessionInfo } from "../../session/session-info.ts";
import { formatBytes, formatTable, printWarning, storeOptions, UsageError, type Command, type CommandContext } from "../context.ts";
import { terminalText } from "../terminal-text.ts";
import { resolveArg } from "../resolve-session.ts";
import { indexLocationOf } from "../index-location.ts";
import { catchUpIndex } from "../../search/index-notify.ts";
import { confirm, entriesOfPrune, expireTrash, findPrune, logPrune, pruneOfTrash, trashRecord } from "../retention-undo.ts";

/**
 * The lifecycle over the CLI's store. A session's usage rows go to the store's usage ledger when it
 * goes to the trash (listings, and so `usage`, no longer see it) and again before it is purged
 * (idempotent: a row is recorded once, and a restored session's calls still count once).
 */
function lifecycleOf(ctx: CommandContext): Lifecycle {
  const options = storeOptions(ctx);
  const record = async (info: PurgeInfo) => {
    await recordDeletedUsage(info.ref, options);
  };
  return Lifecycle.open({ ...options, env: ctx.io.env, onWarning: printWarning(ctx.io), onTrashed: record, onBeforePurge: record });
}

/**
 * Runs `one` for each argument; a failure is printed with its code and the rest still run (exit 1
 * when any failed). Bad arguments stay usage errors.
 */
async function forEachArg(ctx: CommandContext, one: (arg: string) => Promise<void>): Promise<number> {
  let failed = 0;
  for (const arg of ctx.positionals) {
    try {
      await one(arg);
    } catch (err) {
      if (!(err instanceof TranscriptStoreError)) throw err;
      failed++;
      ctx.io.stderr(terminalText`transcript-store: ${err.code}: ${err.message}\n`);
      if (ctx.json) ctx.emit({ type: "failed", arg, code: err.code, message: err.message }, "");
    }
  }
  return failed > 0 ? 1 : 0;
}

function flagCommand(name: string, method: "pin" | "unpin" | "archive" | "unarchive", summary: string, done: string): Command {
  return {
    name,
    summary,
    usage: `${name} <id|path.jsonl>…`,
    options: {},
    minArgs: 1,
    async run(ctx) {
      const life = lifecycleOf(ctx);
      return forEachArg(ctx, async (arg) => {
        const info: SessionInfo = await life[method](await resolveArg(ctx, arg));
        ctx.emit({ type: done, id: info.id, path: info.path }, terminalText`${done} ${info.id} ${info.path}`);
      });
    },
  };
}

export const pinCommand = flagCommand("pin", "pin", "pin sessions: prune never removes them, rm refuses them", "pinned");
export const unpinCommand = flagCommand("unpin", "unpin", "unpin sessions", "unpinned");
export const archiveCommand = flagCommand(
  "archive",
  "archive",
  "archive sessions: out of ls, continueRecent and resume pickers, still openable by id or path (ls --archived shows them)",
  "archived",
);
export const unarchiveCommand = flagCommand("unarchive", "unarchive", "bring archived sessions back into listings", "unarchived");

export const rmCommand: Command = {
  name: "rm",
  summary: "move sessions (with their artifacts) to the trash: restore brings them back until purged",
  usage: "rm <id|path.jsonl>…",
  options: {},
  minArgs: 1,
  async run(ctx) {
    const life = lifecycleOf(ctx);
    return forEachArg(ctx, async (arg) => {
      const e = await life.rm(await resolveArg(ctx, arg));
      ctx.emit(trashRecord("trashed", e), terminalText`trashed ${e.sessionId} (${formatBytes(e.bytes)}) as ${e.trashId}\n  from ${e.from}`);
    });
  },
};

export const trashCommand: Command = {
  name: "trash",
  readOnly: true,
  summary:
    "list the trash (oldest first): when each entry's retention ends, the prune that put it there, " + "and where a restore puts it back",
  usage: "trash",
  options: {},
  maxArgs: 0,
  async run(ctx) {
    const life = lifecycleOf(ctx);
    const entries = await life.listTrash();
    const retainDays = life.config().trash.retainDays;
    const prunes = pruneOfTrash(ctx);
    const until = (e: TrashEntry) => new Date(e.trashedAt.getTime() + retainDays * 86_400_000).toISOString();
    if (ctx.json) {
      for (const e of entries)
        ctx.emit({ ...trashRecord("trash", e), purgeAfter: until(e), pruneId: prunes.get(e.trashId) ?? null, restoresTo: e.from }, "");
      return 0;
    }
    const rows = entries.map((e) => [
      e.trashId,
      e.trashedAt.toISOString().slice(0, 16).replace("T", " "),
      until(e).slice(0, 10),
      formatBytes(e.bytes),
      prunes.get(e.trashId) ?? "-",
      e.from,
    ]);
    const fit =
      ctx.io.columns === undefined ? undefined : { width: ctx.io.columns, shrink: [{ column: 5, keep: "end" as const, min: 20 }] };
    ctx.io.stdout(`${formatTable(["trash id", "trashed", "purge after", "size", "prune", "restores to"], rows, fit)}\n`);
    return 0;
  },
};

export const restoreCommand: Command = {
  name: "restore",
  summary: "put trashed sessions back where they were, byte for byte; a prune's id (or --last-prune) undoes that prune",
  usage: "restore <trash-id|session-id|prune-id>… | restore --last-prune",
  options: { "last-prune": { type: "boolean", default: false } },
  async run(ctx) {
    const life = lifecycleOf(ctx);
    const last = ctx.values["last-prune"] === true;
    if (last && ctx.positionals.length > 0) throw new UsageError("restore: give ids or --last-prune, not both");
    if (!last && ctx.positionals.length === 0)
      throw new UsageError(
        "restore: missing argument (usage: transcript-store restore <trash-id|session-id|prune-id>… | restore --last-prune)",
      );
    const restore = async (ref: string) => {
      const info = await life.restore(ref);
      ctx.emit({ type: "restored", id: info.id, path: info.path }, terminalText`restored ${info.id} ${info.path}`);
    };
    const undo = async (prune: NonNullable<ReturnType<typeof findPrune>>) => {
      const entries = await entriesOfPrune(life, prune);
      for (const e of entries) await restore(e.trashId);
      ctx.emit(
        { type: "summary", pruneId: prune.pruneId, restored: entries.length, of: prune.trashIds.length },
        `restored ${entries.length} of the ${prune.trashIds.length} session(s) prune ${prune.pruneId} trashed`,
      );
    };
    if (last) {
      const prune = findPrune(ctx, "last");
      if (prune === null) throw new TranscriptStoreError("SESSION_NOT_FOUND", "No prune has trashed anything in this store");
      await undo(prune);
      return 0;
    }
    return forEachArg(ctx, async (arg) => {
      const prune = findPrune(ctx, arg);
      await (prune === null ? restore(arg) : undo(prune));
    });
  },
};

export const purgeCommand: Command = {
  name: "purge",
  summary: "delete trash entries for good: those named, --all, or (none named) those past the retention period",
  usage: "purge [<trash-id|session-id>…] [--all | --expired] [--dry-run] [--yes]",
  options: {
    all: { type: "boolean", default: false },
    expired: { type: "boolean", default: false },
    "dry-run": { type: "boolean", default: false },
    yes: { type: "boolean", short: "y", default: false },
  },
  readOnly: (values) => values["dry-run"] === true,
  async run(ctx) {
    const chosen = [ctx.values.all === true, ctx.values.expired === true, ctx.positionals.length > 0].filter(Boolean).length;
    if (chosen > 1) throw new UsageError("purge: give trash ids, --all or --expired, one of them");
    const life = lifecycleOf(ctx);
    const options = { refs: ctx.positionals, all: ctx.values.all === true, dryRun: ctx.values["dry-run"] === true };
    // On a terminal, a real purge asks first (--yes does not); piped, it never asks.
    if (!options.dryRun && ctx.values.yes !== true && ctx.io.stdinIsTTY === true && ctx.io.isTTY) {
      const planned = await life.purge({ ...options, dryRun: true });
      if (planned.purged.length === 0) {
        ctx.emit({ type: "summary", dryRun: false, purged: 0, bytes: 0 }, "purged 0 session(s), 0 B");
        return 0;
      }
      const question = `purge ${planned.purged.length} trashed session(s), ${formatBytes(planned.bytes)}, for good?`;
      if (!(await confirm(ctx, question))) {
        ctx.io.stderr("nothing purged\n");
        return 1;
      }
    }
    const report = await life.purge(options);
    // the store's index forgets the purged sessions now, not at the next search (issue 32, #10)
    if (!report.dryRun && report.purged.length > 0 && ctx.store === undefined)
      await catchUpIndex(indexLocationOf(ctx), printWarning(ctx.io));
    const verb = report.dryRun ? "would purge" : "purged";
    for (const e of report.purged)
      ctx.emit(trashRecord(report.dryRun ? "would-purge" : "purged", e), terminalText`${verb} ${e.trashId} (${formatBytes(e.bytes)})`);
    ctx.emit(
      { type: "summary", dryRun: report.dryRun, purged: report.purged.length, bytes: report.bytes },
      `${verb} ${report.purged.length} session(s), ${formatBytes(report.bytes)}`,
    );
    return 0;
  },
};

function policyOf(ctx: CommandContext, life: Lifecycle): PrunePolicy {
  const policy: PrunePolicy = {};
  const age = ctx.values["older-than"];
  if (typeof age === "string") {
    const ms = parseAge(age);
    if (ms === null) throw new UsageError(`bad --older-than ${JSON.stringify(age)} (e.g. 30d, 12h, 2w)`);
    policy.olderThanMs = ms;
  }
  const size = ctx.values["max-total"];
  if (typeof size === "string") {
    const bytes = parseSize(size);
    if (bytes === null) throw new UsageError(`bad --max-total ${JSON.stringify(size)} (e.g. 10G, 500M)`);
    policy.maxTotalBytes = bytes;
  }
  const keep = ctx.values["keep-last"];
  if (typeof keep === "string") {
    if (!/^\d+$/.test(keep)) throw new UsageError(`bad --keep-last ${JSON.stringify(keep)} (a whole number)`);
    policy.keepLast = Number(keep);
  }
  const rules = Object.keys(policy).length > 0 ? policy : life.config().prune;
  if (rules.olderThanMs === undefined && rules.maxTotalBytes === undefined)
    throw new UsageError("prune: no policy (give --older-than and/or --max-total, or set prune in the retention config)");
  return rules;
}

export const pruneCommand: Command = {
  name: "prune",
  summary:
    "move sessions to the trash by policy (--older-than, --max-total, --keep-last per cwd; default: the retention config); " +
    "never a pinned session or one with a live writer; --dry-run lists exactly what would go",
  usage: "prune [--older-than 30d] [--max-total 10G] [--keep-last N] [--dry-run]",
  options: {
    "older-than": { type: "string" },
    "max-total": { type: "string" },
    "keep-last": { type: "string" },
    "dry-run": { type: "boolean", default: false },
  },
  maxArgs: 0,
  readOnly: (values) => values["dry-run"] === true,
  async run(ctx) {
    const life = lifecycleOf(ctx);
    const report = await life.prune(policyOf(ctx, life), { dryRun: ctx.values["dry-run"] === true });
    const pruneId = report.dryRun ? null : logPrune(ctx, report.trashed, new Date());
    const verb = report.dryRun ? "would trash" : "trashed";
    for (const { session: s, reason } of report.remove)
      ctx.emit(
        {
          type: report.dryRun ? "would-trash" : "trashed",
          id: s.id,
          path: s.path,
          cwd: s.cwd,
          modified: s.modified.toISOString(),
          bytes: s.bytes,
          reason,
        },
        terminalText`${verb} ${s.id} (${formatBytes(s.bytes)}, ${reason}) ${s.path}`,
      );
    for (const { session: s, reason, rule } of report.skipped)
      ctx.emit(
        { type: "skipped", id: s.id, path: s.path, bytes: s.bytes, reason, rule },
        terminalText`kept ${s.id} (${reason === "pinned" ? "pinned" : "live writer"}; ${rule} chose it) ${s.path}`,
      );
    const expired = await expireTrash(ctx, life, report.dryRun);
    ctx.emit(
      {
        type: "summary",
        dryRun: report.dryRun,
        sessions: report.remove.length,
        bytes: report.bytes,
        totalBefore: report.totalBefore,
        totalAfter: report.totalAfter,
        skipped: report.skipped.length,
        pruneId,
        expired: { purged: expired.purged, bytes: expired.bytes, retainDays: expired.retainDays },
      },
      `${verb} ${report.remove.length} session(s), ${formatBytes(report.bytes)} ` +
        `(${formatBytes(report.totalBefore)} → ${formatBytes(report.totalAfter)}; freed on disk once purged), ` +
        `kept ${report.skipped.length}${pruneId === null ? "" : `; undo: transcript-store restore ${pruneId}`}\n${expired.text}`,
    );
    return 0;
  },
};
