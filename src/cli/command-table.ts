import type { Command } from "./context.ts";

/**
 * One command as `--help` lists it, without its code: its name, its summary and how to load it. The
 * CLI loads only the module of the command that runs (start-up, issue 34); `--help` and a mistyped
 * name load none. Each summary is the command's own (test/cli/cli-startup.test.ts checks they agree).
 */
export interface CommandEntry {
  name: string;
  summary: string;
  load: () => Promise<Command>;
}

/** Every command, in the order `--help` lists them. */
export const COMMAND_TABLE: readonly CommandEntry[] = [
  {
    name: "migrate",
    summary: "bring session files to v3 with images in the blob store (imports into the store by default)",
    load: async () => (await import("./commands/migrate.ts")).migrateCommand,
  },
  {
    name: "verify",
    summary: "check headers, lines, tails, parent links, blobs and artifact directories",
    load: async () => (await import("./commands/verify.ts")).verifyCommand,
  },
  {
    name: "gc",
    summary: "delete blobs no session, quarantine or backup file references (older than the grace period)",
    load: async () => (await import("./commands/gc.ts")).gcCommand,
  },
  {
    name: "ls",
    summary: "list sessions of a cwd (default: the current directory), or --all; --archived lists archived ones too",
    load: async () => (await import("./commands/sessions.ts")).lsCommand,
  },
  {
    name: "show",
    summary: "show a session's header, load report and entries; --at <entry> that entry with -C/-A/-B neighbours",
    load: async () => (await import("./commands/sessions.ts")).showCommand,
  },
  {
    name: "export",
    summary:
      "write a session as NDJSON to stdout (secrets redacted unless --no-redact; images inlined unless " +
      "--refs; damaged lines as raw records), or --to another format",
    load: async () => (await import("./commands/transfer.ts")).exportCommand,
  },
  {
    name: "import",
    summary:
      "read a session as NDJSON from a file or stdin into the store (ids kept; raw records to quarantine), " +
      "or --from claude-code|codex transcripts",
    load: async () => (await import("./commands/transfer.ts")).importCommand,
  },
  {
    name: "bundle",
    summary:
      "write sessions with their blobs and artifacts as one tar archive (a manifest of sha256 hashes) to " +
      "stdout or -o <file> (secrets redacted unless --no-redact)",
    load: async () => (await import("./commands/bundle.ts")).bundleCommand,
  },
  {
    name: "unbundle",
    summary:
      "restore a bundle (a file, or - for stdin) into the store after checking every member; --cwd-map " +
      "old=new moves sessions to another cwd",
    load: async () => (await import("./commands/bundle.ts")).unbundleCommand,
  },
  {
    name: "inline-images",
    summary: "put images back inline in session files, in place (the files pi itself reads; the blob store is kept)",
    load: async () => (await import("./commands/inline-images.ts")).inlineImagesCommand,
  },
  {
    name: "redact",
    summary: "scrub secrets from stored session files in place (atomic rewrite as migrate's; reports what it found per rule)",
    load: async () => (await import("./commands/redact.ts")).redactCommand,
  },
  {
    name: "fork",
    summary: "fork a session (with its artifacts) into a new one",
    load: async () => (await import("./commands/sessions.ts")).forkCommand,
  },
  {
    name: "mv",
    summary: "move a session and its artifacts to another cwd",
    load: async () => (await import("./commands/sessions.ts")).mvCommand,
  },
  {
    name: "stats",
    summary: "session and blob sizes, blob count and deduplication ratio",
    load: async () => (await import("./commands/stats.ts")).statsCommand,
  },
  {
    name: "du",
    summary:
      "space per session or cwd, largest first: message text, tool calls and results, thinking, inline " +
      "images, blobs exclusive to it and shared, artifacts, quarantine and backups",
    load: async () => (await import("./commands/accounting.ts")).duCommand,
  },
  {
    name: "usage",
    summary:
      "tokens and cost of the model calls recorded in sessions (deleted sessions' rows included, flagged), " +
      "by session, model, UTC day or cwd; --since/--until: 30d, 12h, 2w or a date",
    load: async () => (await import("./commands/accounting.ts")).usageCommand,
  },
  {
    name: "search",
    summary:
      'search every session\'s messages: words (any form), "exact phrases", prefix*; hits ranked by relevance and recency (exit 1: none)',
    load: async () => (await import("./commands/search.ts")).searchCommand,
  },
  {
    name: "index",
    summary: "bring the search index up to date (--status: how far behind, reading nothing; --rebuild: from nothing)",
    load: async () => (await import("./commands/search.ts")).indexCommand,
  },
  {
    name: "serve",
    summary: "a local web viewer over the store: sessions, search, usage and space, compare; --write enables actions",
    load: async () => (await import("./commands/serve.ts")).serveCommand,
  },
  {
    name: "mcp",
    summary:
      "serve search, show (an entry in context) and usage as read-only tools of a Model Context Protocol " +
      "server on stdin/stdout, output redacted unless --no-redact",
    load: async () => (await import("./commands/mcp.ts")).mcpCommand,
  },
  {
    name: "pin",
    summary: "pin sessions: prune never removes them, rm refuses them",
    load: async () => (await import("./commands/lifecycle.ts")).pinCommand,
  },
  {
    name: "unpin",
    summary: "unpin sessions",
    load: async () => (await import("./commands/lifecycle.ts")).unpinCommand,
  },
  {
    name: "archive",
    summary: "archive sessions: out of ls, continueRecent and resume pickers, still openable by id or path (ls --archived shows them)",
    load: async () => (await import("./commands/lifecycle.ts")).archiveCommand,
  },
  {
    name: "unarchive",
    summary: "bring archived sessions back into listings",
    load: async () => (await import("./commands/lifecycle.ts")).unarchiveCommand,
  },
  {
    name: "rm",
    summary: "move sessions (with their artifacts) to the trash: restore brings them back until purged",
    load: async () => (await import("./commands/lifecycle.ts")).rmCommand,
  },
  {
    name: "trash",
    summary:
      "list the trash (oldest first): when each entry's retention ends, the prune that put it there, and where a restore puts it back",
    load: async () => (await import("./commands/lifecycle.ts")).trashCommand,
  },
  {
    name: "restore",
    summary: "put trashed sessions back where they were, byte for byte; a prune's id (or --last-prune) undoes that prune",
    load: async () => (await import("./commands/lifecycle.ts")).restoreCommand,
  },
  {
    name: "purge",
    summary: "delete trash entries for good: those named, --all, or (none named) those past the retention period",
    load: async () => (await import("./commands/lifecycle.ts")).purgeCommand,
  },
  {
    name: "prune",
    summary:
      "move sessions to the trash by policy (--older-than, --max-total, --keep-last per cwd; default: the " +
      "retention config); never a pinned session or one with a live writer; --dry-run lists exactly what " +
      "would go",
    load: async () => (await import("./commands/lifecycle.ts")).pruneCommand,
  },
  {
    name: "demo",
    summary: "migrate, verify, resume, fork, move and gc the bundled legacy fixtures in a temporary store",
    load: async () => (await import("./commands/demo.ts")).demoCommand,
  },
  {
    name: "encrypt",
    summary:
      "encrypt sessions under the store key (--key-file), their images and artifacts too, each all or " +
      "nothing; without ids: every session, and new sessions are encrypted from now on (config.json " +
      "encrypt: true)",
    load: async () => (await import("./commands/privacy.ts")).encryptCommand,
  },
  {
    name: "decrypt",
    summary:
      "decrypt sessions back to clear text (--key-file), their images and artifacts too, each all or " +
      "nothing; without ids: every session, and new sessions are written in clear again (config.json " +
      "encrypt: false)",
    load: async () => (await import("./commands/privacy.ts")).decryptCommand,
  },
  {
    name: "rekey",
    summary:
      "re-encrypt encrypted sessions (files, or database sessions with --store) under a new key, each all " +
      "or nothing (keys: files of 32 bytes or 64 hex characters)",
    load: async () => (await import("./commands/rekey.ts")).rekeyCommand,
  },
];
