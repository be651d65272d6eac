import type { Command } from "./context.ts";

/**
 * What each command's own flags do: one short text per flag, shown by `<command> --help`. A flag
 * that takes a value names it first (`<file> …`). A test checks every flag of every command has one.
 */
export const FLAG_HELP: Record<string, Record<string, string>> = {
  migrate: {
    to: "<store URL or root dir> copy the sessions into another store (a database URL or a file root) instead",
    "in-place": "rewrite the files where they are instead of importing them into the store",
    backup: "with --in-place: keep each original beside it as <file>.bak",
    "dry-run": "say what would change; write nothing",
    redact: "redact secrets as the sessions are written (also when config.json has redact: true)",
  },
  verify: { "no-rehash": "skip re-hashing every blob (faster; a corrupt blob goes unseen)" },
  gc: {
    "dry-run": "list what would be deleted; delete nothing",
    grace: "<duration> keep unreferenced blobs younger than this (30m, 1h, 0; default 1h)",
    also: "<sessions-root> another sessions tree sharing these blobs: its references count too (repeatable)",
    forget: "<registered-place> stop counting a sessions tree registered earlier (repeatable)",
  },
  ls: { all: "every cwd, not only the current directory's", archived: "include archived sessions" },
  fork: { at: "<entryId> fork at this entry (the branch up to it) instead of the whole session", cwd: "<dir> the fork's cwd" },
  export: {
    install: "with --to claude-code|codex: write the file where the agent resumes it (~/.claude/projects, $CODEX_HOME/sessions)",
    "codex-provider": "<name> with --to codex: the model_provider the rollout names (default: the source's, else openai)",
    refs: "keep images as blob refs instead of inlining their bytes",
    "no-redact": "export secrets as they are (default: redacted, as shared output)",
    to: "<format> write another format instead of NDJSON: atif, markdown, html, claude-code, codex",
    output: "<file> with --to: write to this new file (refused if it exists, unless --force)",
    force: "with -o: replace a file already there (in one rename, once complete)",
    branch: "<entryId> with --to: export the branch ending at this entry",
  },
  import: {
    follow: "with --from: keep importing as the agent writes, until interrupted (only changed files are read)",
    from: "<claude-code|codex> import another agent's transcripts (paths, or its default directory)",
    "dry-run": "with --from: say what would be imported; write nothing",
    redact: "redact secrets as the session is written (also when config.json has redact: true)",
  },
  bundle: {
    output: "<file> write the archive to this new file instead of stdout (refused if it exists, unless --force)",
    force: "with -o: replace a file already there (in one rename, once complete)",
    compress: "gzip the archive (unbundle detects it)",
    "no-redact": "bundle secrets as they are (default: redacted, as shared output)",
  },
  unbundle: {
    "cwd-map": "<old=new> move sessions recorded under old (or below it) to new (repeatable; longest match wins)",
    "dry-run": "check every member and say what would be restored; write nothing",
  },
  redact: {
    backup: "keep each original (its pre-image) in a backup file, named in the report",
    "dry-run": "count what would be redacted per rule; write nothing",
  },
  du: { by: "<session|cwd> group by session (default) or by cwd", top: "<N> show only the N largest" },
  usage: {
    prices: "<file> a price table (JSON) laid over the shipped one, for calls whose cost the agent did not record",
    by: "<session|model|day|cwd> group by this (default: session)",
    since: "<date|duration> only calls at or after this (30d, 12h, 2w, 90m, or a date)",
    until: "<date|duration> only calls before this",
  },
  search: {
    cwd: "<dir> only sessions of this cwd",
    since: "<date|7d> only messages at or after this",
    until: "<date|7d> only messages before this",
    role: "<role> only user, assistant, toolResult or thinking text (repeatable)",
    model: "<m> only messages of this model",
    session: "<id> only this session (id or prefix)",
    limit: "<n> at most n hits (default 20)",
    index: "<file> use this index file instead of the store's",
    progress: "show a progress bar while the index catches up",
    "no-refresh": "answer from the index as it is, without checking the session files (may be stale)",
    sort: "<relevance|recent> order hits by relevance blended with recency (default), or newest first",
    format: "<template> one line per hit from this template, e.g. '{sessionId} {entryId}\\t{title}' (for fzf)",
    context: "<n> show n entries around each hit (as grep -C)",
  },
  show: {
    at: "<entryId> show this entry (id or prefix) with its neighbours instead of the whole session",
    context: "<n> with --at: n entries before and after it, as grep -C",
    after: "<n> with --at: n entries after it (overrides -C on that side)",
    before: "<n> with --at: n entries before it (overrides -C on that side)",
  },
  serve: {
    port: "<n> listen on this port (default: a free one, printed with the URL)",
    host: "<addr> bind this address instead of 127.0.0.1 (warns: others can then reach it)",
    open: "open the URL in your browser",
    write: "enable pin, archive, rm/restore, fork and redact actions (each asks first)",
    redact: "show secrets as markers, as export shares them (the sharing view)",
  },
  mcp: { "no-redact": "serve text with its secrets (default: redacted, as shared output)" },
  index: {
    status: "say how far behind the index is, reading no session",
    rebuild: "build the index again from nothing",
    index: "<file> use this index file instead of the store's",
    progress: "show a progress bar",
  },
  purge: {
    all: "empty the whole trash",
    expired: "only the entries past the retention period (what purge does with no ids)",
    "dry-run": "list what would be deleted; delete nothing",
    yes: "do not ask for confirmation on a terminal (a pipe is never asked)",
  },
  restore: { "last-prune": "undo the last prune: restore every session it trashed that is still in the trash" },
  prune: {
    "older-than": "<duration> trash sessions idle longer than this (30d, 12w)",
    "max-total": "<size> trash the oldest until the store is under this size (10G, 500M)",
    "keep-last": "<N> keep at least the N newest sessions of each cwd",
    "dry-run": "list exactly what would go (and what of the trash has expired); move nothing",
  },
  demo: { keep: "keep the temporary store and print where it is" },
  rekey: { "new-key-file": "<file> the new key (32 bytes, or 64 hex characters); --key-file names the current one" },
};

/** A command's `Options:` lines (its flags, each with its text), wrapped by `wrap`; empty when it has none. */
export function flagLines(command: Command, wrap: (text: string, indent: number, first: number) => string): string {
  const help = FLAG_HELP[command.name] ?? {};
  const rows = Object.entries(command.options).map(([name, spec]) => {
    const text = help[name] ?? "";
    const value = spec.type === "string" ? (/^<[^>]+>/.exec(text)?.[0] ?? "<value>") : "";
    const flag = `${spec.short === undefined ? "" : `-${spec.short}, `}--${name}${value === "" ? "" : ` ${value}`}`;
    return { flag, text: text.slice(value === "" ? 0 : value.length).trim() };
  });
  if (rows.length === 0) return "";
  const width = Math.min(28, Math.max(...rows.map((r) => r.flag.length)) + 2);
  const lines = rows.map((r) => {
    const head = `  ${r.flag}`;
    const pad = head.length + 2 > width + 2 ? `${head}\n${" ".repeat(width + 2)}` : head.padEnd(width + 2);
    return `${pad}${wrap(r.text, width + 2, width + 2)}`;
  });
  return `Options:\n${lines.join("\n")}\n`;
}
