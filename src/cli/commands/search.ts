import { resolve } from "node:path";
import type { StoreWarning } from "../../errors.ts";
import { SEARCH_ROLES, type SearchRole } from "../../search/entry-text.ts";
import {
  type IndexRefreshReport,
  openSessionIndex,
  type SearchHit,
  type SearchOptions,
  type SessionIndex,
} from "../../search/session-index.ts";
import { type IndexProgressOutput, startIndexProgress } from "../index-progress.ts";
import { isWindowsOnlyAbsolute } from "../../session/paths.ts";
import { formatBytes, printWarning, storeOptions, UsageError, type Command, type CommandContext } from "../context.ts";
import { noteEncryptedSkipped } from "../encrypted-notice.ts";
import { terminalText } from "../terminal-text.ts";
import { contextCounts, entryWindow, formatWindow } from "../entry-context.ts";
import { resolveArg } from "../resolve-session.ts";
import { checkFormat, formatHit, hitText, printHitText, useColour } from "../search-output.ts";
import { SessionManager } from "../../session/session-manager.ts";

const DURATION = /^(\d+)(m|h|d|w)$/;
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `--since`/`--until`: an ISO date or time, or an age (`30m`, `12h`, `7d`, `2w` ago). */
export function parseTimeOption(name: string, value: string, now: number): Date {
  const age = DURATION.exec(value);
  if (age !== null) return new Date(now - Number(age[1]) * UNIT_MS[age[2]!]!);
  const date = /^\d{4}-\d{2}-\d{2}/.test(value) ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime()))
    throw new UsageError(
      terminalText`--${name} must be an ISO date (2026-01-31, 2026-01-31T12:00Z) or an age (30m, 12h, 7d, 2w), got ${value}`,
    );
  return date;
}

/** Opens the index of the CLI's store: the file tree's (`--index` names another file) or the database's own. */
export async function openIndex(
  ctx: CommandContext,
  onWarning: (w: StoreWarning) => void,
  progress?: IndexProgressOutput,
): Promise<SessionIndex> {
  const indexPath = ctx.values.index as string | undefined;
  if (ctx.store !== undefined) {
    if (indexPath !== undefined) throw new UsageError("--index names the file tree's index file; a database store keeps its index itself");
    return openSessionIndex({ store: storeOptions(ctx).store!, onWarning });
  }
  return openSessionIndex({
    ...(ctx.root !== undefined ? { root: ctx.root } : {}),
    sessionsDir: ctx.dirs.sessionsDir,
    ...(indexPath !== undefined ? { indexPath: resolve(ctx.io.cwd, indexPath) } : {}),
    onWarning,
    ...(progress?.onProgress !== undefined ? { onProgress: progress.onProgress } : {}),
  });
}

function searchOptions(ctx: CommandContext): SearchOptions {
  const v = ctx.values;
  const options: SearchOptions = {};
  const now = Date.now();
  // a cwd recorded on Windows stays as written (as the index keeps it), any other is resolved here
  if (v.cwd !== undefined) options.cwd = isWindowsOnlyAbsolute(v.cwd as string) ? (v.cwd as string) : resolve(ctx.io.cwd, v.cwd as string);
  if (v.since !== undefined) options.since = parseTimeOption("since", v.since as string, now);
  if (v.until !== undefined) options.until = parseTimeOption("until", v.until as string, now);
  if (v.role !== undefined) {
    const roles = (v.role as string[]).flatMap((r) => r.split(","));
    for (const role of roles)
      if (!(SEARCH_ROLES as readonly string[]).includes(role))
        throw new UsageError(terminalText`--role must be one of ${SEARCH_ROLES.join(", ")}, got ${role}`);
    options.roles = roles as SearchRole[];
  }
  if (v.model !== undefined) options.model = v.model as string;
  if (v.session !== undefined) options.session = v.session as string;
  if (v["no-refresh"] === true) options.refresh = false;
  if (v.sort !== undefined) {
    if (v.sort !== "relevance" && v.sort !== "recent")
      throw new UsageError(terminalText`--sort must be relevance or recent, got ${v.sort}`);
    options.sort = v.sort;
  }
  if (v.limit !== undefined) {
    const limit = Number(v.limit);
    if (!Number.isSafeInteger(limit) || limit < 1) throw new UsageError(terminalText`--limit must be a positive integer, got ${v.limit}`);
    options.limit = limit;
  }
  return options;
}

export const searchCommand: Command = {
  name: "search",
  summary:
    'search every session\'s messages: words (any form), "exact phrases", prefix*; hits ranked by relevance and recency ' +
    "(exit 1: none)",
  usage:
    "search <query…> [--cwd <dir>] [--since <date|7d>] [--until <date|7d>] [--role <role>] [--model <m>] [--session <id>] " +
    "[--limit <n>] [--sort relevance|recent] [-C <n>] [--format <template>] [--progress] [--no-refresh]",
  errorExit: 2,
  options: {
    cwd: { type: "string" },
    since: { type: "string" },
    until: { type: "string" },
    role: { type: "string", multiple: true },
    model: { type: "string" },
    session: { type: "string" },
    limit: { type: "string" },
    index: { type: "string" },
    progress: { type: "boolean", default: false },
    "no-refresh": { type: "boolean", default: false },
    sort: { type: "string" },
    format: { type: "string" },
    context: { type: "string", short: "C" },
  },
  minArgs: 1,
  async run(ctx) {
    const options = searchOptions(ctx);
    const template = typeof ctx.values.format === "string" ? checkFormat(ctx.values.format) : null;
    const { after: around } = contextCounts({ context: ctx.values.context });
    const progress = startIndexProgress(ctx, "indexing", false);
    const index = await openIndex(ctx, printWarning(ctx.io), progress);
    try {
      let hits: Awaited<ReturnType<SessionIndex["search"]>>;
      try {
        hits = await index.search(ctx.positionals.join(" "), options);
      } finally {
        progress.stop();
      }
      const colour = useColour(ctx.io);
      for (const hit of hits) {
        if (template !== null && !ctx.json) {
          ctx.io.stdout(`${formatHit(template, hit)}\n`);
          continue;
        }
        if (ctx.json) ctx.emit({ type: "hit", ...hit }, "");
        else printHitText(ctx.io, hitText(hit), colour);
        if (around > 0) await printContext(ctx, hit, around);
      }
      if (!ctx.json && template === null)
        ctx.io.stderr(
          hits.length === 0 ? "no hits\n" : `${hits.length} hit(s); read one: transcript-store show <session> --at <entry> -C 3\n`,
        );
      noteEncryptedSkipped(ctx, "search");
      if (options.refresh === false)
        printWarning(ctx.io)({
          message:
            "answered from the index as it is (--no-refresh): what was written since its last refresh is not searched; " +
            "`index --status` says how far behind it is",
        });
      // as grep and rg: 0 with hits, 1 without, 2 on an error (errorExit)
      return hits.length > 0 ? 0 : 1;
    } finally {
      await index.close();
    }
  },
};

/** A hit's entry with `around` entries each side (`search -C`), read from its session (a fork or an archived one too). */
async function printContext(ctx: CommandContext, hit: SearchHit, around: number): Promise<void> {
  const info = await resolveArg(ctx, hit.sessionId);
  const m = await SessionManager.open(info.path, { ...storeOptions(ctx), readOnly: true, rehydrate: "lazy" });
  try {
    const window = entryWindow(m.getEntries(), hit.entryId, around, around);
    if (ctx.json) {
      for (const [i, entry] of window.entries.entries())
        if (i !== window.at) ctx.emit({ type: "context", sessionId: hit.sessionId, of: hit.entryId, entry }, "");
    } else ctx.io.stdout(`${formatWindow(window).replace(/^/gmu, "    ")}\n`);
  } finally {
    await m.close();
  }
}

export const indexCommand: Command = {
  name: "index",
  summary: "bring the search index up to date (--status: how far behind, reading nothing; --rebuild: from nothing)",
  usage: "index [--status | --rebuild] [--index <file>] [--progress]",
  options: {
    status: { type: "boolean", default: false },
    rebuild: { type: "boolean", default: false },
    index: { type: "string" },
    progress: { type: "boolean", default: false },
  },
  readOnly: (values) => values.status === true,
  maxArgs: 0,
  async run(ctx) {
    if (ctx.values.status && ctx.values.rebuild) throw new UsageError("index: --status and --rebuild exclude each other");
    const progress = ctx.values.status ? { stop() {} } : startIndexProgress(ctx, "indexing", ctx.values.rebuild === true);
    const index = await openIndex(ctx, printWarning(ctx.io), progress);
    try {
      if (ctx.values.status) {
        const s = await index.status();
        const behind = `behind by ${s.sessionsBehind} session(s), ${formatBytes(s.bytesBehind)}, ${s.sessionsGone} gone`;
        ctx.emit(
          { type: "index-status", ...s },
          terminalText`index:    ${s.location}\n` +
            `state:    ${s.fresh ? "fresh" : behind}\n` +
            `sessions: ${s.sessionsIndexed}, texts: ${s.entriesIndexed}`,
        );
        noteEncryptedSkipped(ctx, "the index");
        return 0;
      }
      let r: IndexRefreshReport;
      try {
        r = ctx.values.rebuild ? await index.rebuild() : await index.refresh();
      } finally {
        progress.stop();
      }
      ctx.emit(
        { type: "index-refresh", rebuilt: ctx.values.rebuild === true, ...r },
        `${ctx.values.rebuild ? "rebuilt" : "refreshed"}: ${r.filesSeen} file(s) seen, ${r.sessionsAdded} added, ` +
          `${r.sessionsUpdated} updated, ${r.sessionsReindexed} re-indexed, ${r.sessionsRemoved} removed; ` +
          `${r.entriesIndexed} text(s) from ${formatBytes(r.bytesRead)} read`,
      );
      return 0;
    } finally {
      await index.close();
    }
  },
};
