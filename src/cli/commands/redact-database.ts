import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { scrubArtifacts } from "../../artifacts/artifact-scrub.ts";
import { TranscriptStoreError } from "../../errors.ts";
import { BUILTIN_SECRET_RULES } from "../../prepare/secret-rules.ts";
import { describeCounts, SecretRedactor, type RedactionCounts } from "../../prepare/redact-secrets.ts";
import { RedactionKeySlot } from "../../crypto/redaction-key-slot.ts";
import { SessionManager } from "../../session/session-manager.ts";
import { resolveSessionManagerOptions } from "../../session/session-options.ts";
import { defaultRoot, fileSafeId } from "../../session/paths.ts";
import type { StoreRedactReport } from "../../storage/store-drivers.ts";
import { storedRewritesOf } from "../../storage/stored-rewrites.ts";
import { storeOptions, UsageError, type CommandContext } from "../context.ts";
import { writeNewOutput } from "../output-file.ts";
import { terminalText } from "../terminal-text.ts";

/**
 * The file `--backup` writes a session's pre-image to: in the current directory, never replacing one.
 * The id comes from a transcript: only its file-safe form names the file (no `/` or `..` leaves the directory).
 */
export function backupNameOf(id: string): string {
  return `${fileSafeId(id)}.pre-redact.jsonl`;
}

/**
 * `redact --store`: each database session's entry rows scrubbed in one transaction under its lease
 * (pg-redact.ts), then its artifacts (through the session's artifact mirror, written back fenced).
 * Markers use the database's redaction key (or the one `$TRANSCRIPT_STORE_REDACTION_KEY_FILE` names).
 * `--backup` writes the session as it was (header and rows, a JSONL file `import` takes back) to
 * `<id>.pre-redact.jsonl` in the current directory, mode 0600, before the rewrite (an existing file
 * is `OUTPUT_EXISTS`: nothing rewritten): the secrets it holds are then yours to keep or destroy.
 */
export async function redactDatabase(ctx: CommandContext, dryRun: boolean): Promise<number> {
  const resolved = resolveSessionManagerOptions(storeOptions(ctx));
  const backend = storedRewritesOf(resolved.store, "redact --store");
  if (backend === null) throw new UsageError("redact --store needs a store (--store URL or TRANSCRIPT_STORE_URL)");
  const slot = RedactionKeySlot.resolve(undefined, ctx.root ?? defaultRoot());
  // The database's key makes the markers; a dry run creates none (markers are never written, any key will do).
  if (slot.wantsStoreKey)
    slot.fromStore(dryRun ? ((await backend.sharingRedactionKey()) ?? randomBytes(32)) : await backend.redactionKey());
  const redactor = new SecretRedactor(BUILTIN_SECRET_RULES, () => slot.get());
  const ids =
    ctx.positionals.length > 0
      ? await Promise.all(ctx.positionals.map((arg) => backend.sessionIdOf(arg)))
      : (await resolved.store!.list(null, resolved)).map((s) => s.id);
  const total: RedactionCounts = new Map();
  let rewritten = 0;
  let failed = 0;
  for (const id of ids) {
    let report: StoreRedactReport;
    let backup: string | null = null;
    const artifactsFound: RedactionCounts = new Map();
    let artifacts = 0;
    try {
      report = await backend.redactSession(id, redactor, {
        dryRun,
        beforeRewrite:
          ctx.values.backup === true
            ? async (headerLine, lines) => {
                backup = join(ctx.io.cwd, backupNameOf(id));
                await writeNewOutput(backup, [headerLine, "\n", ...lines.flatMap((l) => [l, "\n"])]);
              }
            : undefined,
      });
      if (report.status !== "encrypted") artifacts = await scrubSessionArtifacts(ctx, id, redactor, artifactsFound, dryRun);
    } catch (err) {
      if (!(err instanceof TranscriptStoreError)) throw err;
      failed++;
      ctx.emit(
        { type: "session", id, status: "failed", error: { code: err.code, message: err.message } },
        `failed  ${err.code}: ${err.message}  ${id}`,
      );
      continue;
    }
    if (!dryRun && (report.status === "redacted" || artifacts > 0)) await backend.reindexSearch([id]);
    for (const [rule, n] of [...report.found, ...artifactsFound]) total.set(rule, (total.get(rule) ?? 0) + n);
    if (report.status === "redacted" || report.status === "planned") rewritten++;
    const found = report.found.size === 0 ? "nothing found" : describeCounts(report.found);
    const inArtifacts = artifacts === 0 ? "" : `; artifacts: ${describeCounts(artifactsFound)}`;
    ctx.emit(
      {
        type: "session",
        id,
        status: report.status,
        entries: report.entries,
        found: Object.fromEntries(report.found),
        artifacts,
        artifactsFound: Object.fromEntries(artifactsFound),
        backup,
      },
      terminalText`${report.status}  ${found}${inArtifacts}  ${id}${backup === null ? "" : `  (backup ${backup})`}`,
    );
  }
  const summary = total.size === 0 ? "no secrets found" : describeCounts(total);
  ctx.emit(
    { type: "totals", sessions: ids.length, rewritten, failed, found: Object.fromEntries(total), dryRun },
    `${ids.length} session(s): ${summary}; ${dryRun ? "would rewrite" : "rewrote"} ${rewritten}${failed > 0 ? `; ${failed} failed` : ""}`,
  );
  return failed > 0 ? 1 : 0;
}

/** The session's artifacts scrubbed through its mirror (written back on close, fenced by the lease); a dry run writes nothing. */
async function scrubSessionArtifacts(
  ctx: CommandContext,
  id: string,
  redactor: SecretRedactor,
  counts: RedactionCounts,
  dryRun: boolean,
): Promise<number> {
  const m = await SessionManager.open(id, { ...storeOptions(ctx), readOnly: dryRun });
  try {
    const artifacts = m.artifacts;
    return artifacts === null ? 0 : scrubArtifacts(artifacts, redactor, counts, dryRun).changed;
  } finally {
    await m.close();
  }
}
