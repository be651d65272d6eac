import { resolve } from "node:path";
import type { StoreWarning } from "../../errors.ts";
import type { SessionInfo } from "../../session/session-info.ts";
import { SessionManager } from "../../session/session-manager.ts";
import { subagentOf } from "../../interchange/foreign-entry.ts";
import { formatBytes, formatTable, lazyImages, printWarning, storeOptions, type Command } from "../context.ts";
import { sealImported, sealsNewSessions } from "../write-redaction.ts";
import { resolveArg } from "../resolve-session.ts";
import { CONTEXT_OPTIONS, contextCounts, entryWindow, formatWindow } from "../entry-context.ts";
import { terminalSafe, terminalText } from "../terminal-text.ts";

function infoRecord(info: SessionInfo) {
  return { type: "session", ...info, created: info.created.toISOString(), modified: info.modified.toISOString() };
}

export const lsCommand: Command = {
  name: "ls",
  readOnly: true,
  summary: "list sessions of a cwd (default: the current directory), or --all; --archived lists archived ones too",
  usage: "ls [cwd] [--all] [--archived]",
  options: { all: { type: "boolean", default: false }, archived: { type: "boolean", default: false } },
  maxArgs: 1,
  async run(ctx) {
    const print = printWarning(ctx.io);
    // A directory or file that cannot be read hides sessions: the listing is incomplete (exit 1).
    let unreadable = false;
    const warn = (w: StoreWarning) => {
      if (w.code === "PERSISTENCE_FAILED") unreadable = true;
      print(w);
    };
    const listing = { ...storeOptions(ctx), onWarning: warn, includeArchived: ctx.values.archived === true };
    const list = ctx.values.all
      ? await SessionManager.listAll(listing)
      : await SessionManager.list(resolve(ctx.io.cwd, ctx.positionals[0] ?? "."), listing);
    if (ctx.json) {
      for (const info of list) ctx.emit(infoRecord(info), "");
      return unreadable ? 1 : 0;
    }
    if (list.length === 0) {
      // nothing to tabulate: say where nothing was found, and where to look (stdout stays empty)
      ctx.io.stderr(
        ctx.values.all
          ? terminalText`no sessions in the store (${ctx.store === undefined ? ctx.dirs.sessionsDir : "its database"})\n`
          : terminalText`no sessions of ${resolve(ctx.io.cwd, ctx.positionals[0] ?? ".")}; ls --all lists every cwd's\n`,
      );
      return unreadable ? 1 : 0;
    }
    const rows = list.map((s) => [
      s.id,
      s.modified.toISOString().slice(0, 16).replace("T", " "),
      formatBytes(s.size),
      String(s.messageCount),
      s.cwd,
      `${s.pinned ? "[pinned] " : ""}${s.archived ? "[archived] " : ""}${s.title ?? s.firstMessage ?? ""}`,
    ]);
    // On a terminal the title, then the cwd (its tail kept), then the id (a prefix still resolves)
    // are cut to fit its width; piped, rows are whole.
    const width = ctx.io.columns;
    const shrink = [
      { column: 5, keep: "start" as const, min: 10 },
      { column: 4, keep: "end" as const, min: 10 },
      { column: 0, keep: "start" as const, min: 14 },
    ];
    const fit = width === undefined ? undefined : { width, shrink };
    ctx.io.stdout(`${formatTable(["id", "modified", "size", "msgs", "cwd", "title / first message"], rows, fit)}\n`);
    return unreadable ? 1 : 0;
  },
};

export const showCommand: Command = {
  name: "show",
  readOnly: true,
  summary: "show a session's header, load report and entries; --at <entry> that entry with -C/-A/-B neighbours",
  usage: "show <id|path.jsonl> [--at <entryId> [-C <n>] [-A <n>] [-B <n>]]",
  options: { at: { type: "string" }, ...CONTEXT_OPTIONS },
  minArgs: 1,
  maxArgs: 1,
  async run(ctx) {
    const info = await resolveArg(ctx, ctx.positionals[0]!);
    const m = await SessionManager.open(info.path, { ...storeOptions(ctx), readOnly: true, ...lazyImages(ctx) });
    if (typeof ctx.values.at === "string") {
      try {
        const { before, after } = contextCounts(ctx.values);
        const window = entryWindow(m.getEntries(), ctx.values.at, before, after);
        if (ctx.json) {
          for (const [i, entry] of window.entries.entries())
            ctx.emit({ type: "entry", sessionId: m.sessionId, match: i === window.at, entry }, "");
        } else ctx.io.stdout(`${formatWindow(window)}\n`);
        return 0;
      } finally {
        await m.close();
      }
    }
    if (ctx.json) {
      ctx.emit(
        {
          type: "session",
          path: info.path,
          header: m.header,
          loadReport: m.loadReport,
          leafId: m.getLeafId(),
          entries: m.getEntries().length,
        },
        "",
      );
      return 0;
    }
    ctx.io.stdout(terminalText`${info.path}\n${JSON.stringify(m.header)}\n`);
    const r = m.loadReport;
    ctx.io.stdout(
      `${r.entries} entries, ${r.malformed.length} malformed line(s), torn tail: ${r.tornTail ? "yes" : "no"}` +
        `${r.migratedFrom !== null ? `, v${r.migratedFrom} (migrates on write)` : ""}\n\n`,
    );
    for (const e of m.getEntries()) {
      const msg = e.message as { role?: string; content?: unknown } | undefined;
      const text =
        typeof msg?.content === "string"
          ? msg.content
          : Array.isArray(msg?.content)
            ? (msg.content as Array<{ type?: string; text?: string }>).map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join(" ")
            : "";
      // an imported agent's spawn names the subagent's session (docs/interchange.md, Subagents)
      const sub = subagentOf(e);
      const spawned = sub === null ? "" : ` [subagent ${sub.session}]`;
      const line = `${e.id} ${e.type}${msg?.role ? `/${msg.role}` : ""}${spawned} ${text.replace(/\s+/g, " ").slice(0, 100)}`;
      ctx.io.stdout(`${terminalSafe(line)}\n`);
    }
    return 0;
  },
};

export const forkCommand: Command = {
  name: "fork",
  summary: "fork a session (with its artifacts) into a new one",
  usage: "fork <id> [--at <entryId>] [--cwd <dir>]",
  createsStore: true,
  options: { at: { type: "string" }, cwd: { type: "string" } },
  minArgs: 1,
  maxArgs: 1,
  async run(ctx) {
    const info = await resolveArg(ctx, ctx.positionals[0]!);
    const seal = sealsNewSessions(ctx);
    const cwd = typeof ctx.values.cwd === "string" ? resolve(ctx.io.cwd, ctx.values.cwd) : info.cwd || ctx.io.cwd;
    const fork = await SessionManager.forkFrom(info.path, cwd, {
      ...storeOptions(ctx),
      ...lazyImages(ctx),
      atEntryId: ctx.values.at as string | undefined,
      onWarning: printWarning(ctx.io),
    });
    await fork.close();
    // A fork of a clear session copies it as it is: sealed at once in a store that encrypts (or with a key).
    if (seal && fork.location !== null) await sealImported(ctx, fork.location);
    ctx.emit(
      { type: "fork", id: fork.sessionId, path: fork.location, parentSession: info.id, entries: fork.getEntries().length },
      terminalText`forked ${info.id} → ${fork.sessionId}\n${fork.location}`,
    );
    return 0;
  },
};

export const mvCommand: Command = {
  name: "mv",
  summary: "move a session and its artifacts to another cwd",
  usage: "mv <id> <new-cwd>",
  options: {},
  minArgs: 2,
  maxArgs: 2,
  async run(ctx) {
    const info = await resolveArg(ctx, ctx.positionals[0]!);
    const m = await SessionManager.open(info.path, { ...storeOptions(ctx), ...lazyImages(ctx) });
    try {
      await m.moveTo(resolve(ctx.io.cwd, ctx.positionals[1]!));
    } finally {
      await m.close();
    }
    ctx.emit(
      { type: "moved", id: m.sessionId, from: info.path, to: m.location, cwd: m.cwd },
      terminalText`moved ${m.sessionId} to ${m.cwd}\n${m.location}`,
    );
    return 0;
  },
};
