import { basename, join, resolve } from "node:path";
import { TranscriptStoreError } from "../../errors.ts";
import { trashDirOf } from "../../lifecycle/file-trash.ts";
import type { TrashEntry } from "../../lifecycle/lifecycle-driver.ts";
import { Lifecycle } from "../../lifecycle/lifecycle.ts";
import { randomBytes } from "node:crypto";
import { redactSessionFile, type RedactFileReport } from "../../maintenance/redact-file.ts";
import { BUILTIN_SECRET_RULES } from "../../prepare/secret-rules.ts";
import { describeCounts, SecretRedactor, type RedactionCounts } from "../../prepare/redact-secrets.ts";
import { defaultRoot } from "../../session/paths.ts";
import { readRedactionKey } from "../../crypto/redaction-key.ts";
import { RedactionKeySlot } from "../../crypto/redaction-key-slot.ts";
import { redactDatabase } from "./redact-database.ts";
import { type Command, type CommandContext, printWarning, storeOptions } from "../context.ts";
import { reindexChanged } from "../../search/index-notify.ts";
import { indexLocationOf } from "../index-location.ts";
import { findSessionFiles } from "../find-files.ts";
import { startProgress } from "../progress.ts";
import { terminalText } from "../terminal-text.ts";
import { io } from "../../io.ts";
import { resolveArg } from "../resolve-session.ts";

export const redactCommand: Command = {
  name: "redact",
  summary: "scrub secrets from stored session files in place (atomic rewrite as migrate's; reports what it found per rule)",
  usage: "redact [paths…|ids…] [--dry-run] [--backup] (with --store: database sessions, each in one transaction)",
  options: {
    backup: { type: "boolean", default: false },
    "dry-run": { type: "boolean", default: false },
  },
  async run(ctx) {
    const dryRun = ctx.values["dry-run"] === true;
    if (ctx.store !== undefined) return redactDatabase(ctx, dryRun);
    const root = ctx.root !== undefined ? resolve(ctx.root) : defaultRoot();
    // The store's key makes the markers (created on the first secret); a dry run creates no file.
    const slot = RedactionKeySlot.resolve(undefined, root);
    const key = dryRun && !slot.explicit ? () => readRedactionKey(root) ?? DRY_RUN_KEY : () => slot.get();
    const redactor = new SecretRedactor(BUILTIN_SECRET_RULES, key);
    const paths: string[] = [];
    // A path that exists is a file or a tree to search; anything else names a session (id or prefix).
    for (const arg of ctx.positionals) paths.push(io.existsSync(resolve(ctx.io.cwd, arg)) ? arg : await sessionOrTrashed(ctx, arg));
    // The trash is redacted too: a restore must not bring a secret back.
    const everything = [ctx.dirs.sessionsDir, ...(io.existsSync(trashDirOf(root)) ? [trashDirOf(root)] : [])];
    const files = await findSessionFiles(paths.length > 0 ? paths : everything, ctx.io.cwd);
    const progress = startProgress(ctx.io, files.length, dryRun ? "scanning" : "redacting", ctx.json);
    const reports: RedactFileReport[] = [];
    try {
      for (const file of files) {
        reports.push(
          await redactSessionFile(file, {
            redactor,
            sessionsDir: ctx.dirs.sessionsDir,
            blobsDir: ctx.dirs.blobsDir,
            layout: ctx.layout,
            backup: ctx.values.backup === true,
            dryRun,
          }),
        );
        await progress.tick(basename(file));
      }
    } finally {
      progress.stop();
    }
    if (!dryRun) await reindexRedacted(ctx, reports);
    const total: RedactionCounts = new Map();
    let failed = 0;
    let rewritten = 0;
    for (const r of reports) {
      for (const [rule, n] of [...r.found, ...r.artifactsFound]) total.set(rule, (total.get(rule) ?? 0) + n);
      // An encrypted session's lines are ciphertext: reported `encrypted`, not scanned (as on PostgreSQL).
      const encrypted = r.migrate.status === "failed" && r.migrate.error?.code === "KEY_REQUIRED";
      const status = encrypted ? "encrypted" : r.migrate.status;
      if (status === "failed" || status === "conflict") failed++;
      if (status === "migrated" || status === "planned") rewritten++;
      const found = r.found.size === 0 ? "nothing found" : describeCounts(r.found);
      const inArtifacts = r.artifacts === 0 ? "" : `; artifacts: ${describeCounts(r.artifactsFound)}`;
      const error = r.migrate.error === undefined || encrypted ? "" : ` ${r.migrate.error.code}: ${r.migrate.error.message}`;
      const kept = r.migrate.backup === undefined ? "" : `  (original kept in ${r.migrate.backup})`;
      ctx.emit(
        {
          type: "file",
          source: r.migrate.source,
          status,
          entries: r.entries,
          found: Object.fromEntries(r.found),
          artifacts: r.artifacts,
          artifactsFound: Object.fromEntries(r.artifactsFound),
          ...(r.migrate.backup !== undefined ? { backup: r.migrate.backup } : {}),
          error: encrypted ? undefined : r.migrate.error,
        },
        terminalText`${status}  ${found}${inArtifacts}${error}  ${r.migrate.source}${kept}`,
      );
    }
    const summary = total.size === 0 ? "no secrets found" : describeCounts(total);
    const verb = dryRun ? "would rewrite" : "rewrote";
    ctx.emit(
      { type: "totals", files: reports.length, rewritten, failed, found: Object.fromEntries(total), dryRun },
      `${reports.length} file(s): ${summary}; ${verb} ${rewritten}${failed > 0 ? `; ${failed} failed` : ""}`,
    );
    return failed > 0 ? 1 : 0;
  },
};

/** The index learns of every session redact rewrote or whose artifacts it scrubbed (their stats may not show it). */
async function reindexRedacted(ctx: CommandContext, reports: RedactFileReport[]): Promise<void> {
  const changed = reports.filter((r) => r.migrate.status === "migrated" || r.artifacts > 0).map((r) => r.migrate.source);
  await reindexChanged(indexLocationOf(ctx), changed, printWarning(ctx.io));
}

/** The session file of a live session, else of a trashed one (by session or trash id). */
async function sessionOrTrashed(ctx: CommandContext, arg: string): Promise<string> {
  try {
    return (await resolveArg(ctx, arg)).path;
  } catch (err) {
    if (!(err instanceof TranscriptStoreError) || err.code !== "SESSION_NOT_FOUND") throw err;
    const root = ctx.root !== undefined ? resolve(ctx.root) : defaultRoot();
    let entry: TrashEntry;
    try {
      entry = await Lifecycle.open(storeOptions(ctx)).findTrash(arg);
    } catch {
      throw err;
    }
    return join(trashDirOf(root), entry.trashId, basename(entry.from));
  }
}

/** A dry run of a store without a key: markers are never written, so any key will do. */
const DRY_RUN_KEY = randomBytes(32);
