import type { SecretRedactor, RedactionCounts } from "../prepare/redact-secrets.ts";
import { redactSecretsStage } from "../prepare/redact-secrets.ts";
import { migrateFile, type MigrateFileOptions, type MigrateFileReport } from "./migrate-file.ts";

export interface RedactFileOptions extends Omit<MigrateFileOptions, "inPlace" | "stages"> {
  redactor: SecretRedactor;
}

export interface RedactFileReport {
  /** The rewrite's report (`migrated`: rewritten, `current`: nothing found, `planned`: a dry run would rewrite). */
  migrate: MigrateFileReport;
  /** Secrets found, per rule (rule id → count); never the secrets. */
  found: RedactionCounts;
  /** Entries in which something was found. */
  entries: number;
}

/**
 * Scrubs one session file in place through migrate's rewrite (`migrateFile` with `inPlace` and the
 * redaction stage): streamed into a temp file beside it, verified, renamed over it, appends made
 * meanwhile caught up; `backup` keeps the original as `<file>.bak`; `dryRun` writes nothing. A file
 * in which nothing is found (a second run: markers are never matched again) is left untouched.
 * Like migrate, the rewrite also brings the file to v3 with its images in the blob store; the
 * header line and quarantined lines are not scanned.
 */
export async function redactSessionFile(file: string, options: RedactFileOptions): Promise<RedactFileReport> {
  const found: RedactionCounts = new Map();
  let entries = 0;
  const stage = redactSecretsStage(options.redactor, (_entry, counts) => {
    entries++;
    for (const [rule, n] of counts) found.set(rule, (found.get(rule) ?? 0) + n);
  });
  const { redactor: _r, ...rest } = options;
  const migrate = await migrateFile(file, { ...rest, inPlace: true, stages: [stage] });
  return { migrate, found, entries };
}
