import { ArtifactStore } from "../artifacts/artifact-store.ts";
import { scrubArtifacts } from "../artifacts/artifact-scrub.ts";
import { io } from "../io.ts";
import type { SecretRedactor, RedactionCounts } from "../prepare/redact-secrets.ts";
import { redactSecretsStage } from "../prepare/redact-secrets.ts";
import { artifactsDirOf } from "../session/paths.ts";
import { acquireSessionLock } from "../session/session-lock.ts";
import { migrateFile, type MigrateFileOptions, type MigrateFileReport } from "./migrate-file.ts";
import { reclaimDeadSessionTemps } from "./dead-temps.ts";

export interface RedactFileOptions extends Omit<MigrateFileOptions, "inPlace" | "stages"> {
  redactor: SecretRedactor;
}

export interface RedactFileReport {
  /** The rewrite's report (`migrated`: rewritten, `current`: nothing found, `planned`: a dry run would rewrite). */
  migrate: MigrateFileReport;
  /** Secrets found in the session file's entries, per rule (rule id → count); never the secrets. */
  found: RedactionCounts;
  /** Entries in which something was found. */
  entries: number;
  /** Secrets found in the session's artifacts and agent outputs, per rule. */
  artifactsFound: RedactionCounts;
  /** Artifacts and agent outputs in which something was found (rewritten unless a dry run). */
  artifacts: number;
}

/**
 * Scrubs one session file in place through migrate's rewrite (`migrateFile` with `inPlace` and the
 * redaction stage): streamed into a temp file beside it, verified, renamed over it, appends made
 * meanwhile caught up; `backup` keeps the original as `<file>.bak`; `dryRun` writes nothing. A file
 * in which nothing is found (a second run: markers are never matched again) is left untouched.
 * Then its artifacts directory (`scrubArtifacts`), under the session's lock. Like migrate, the
 * rewrite also brings the file to v3 with its images in the blob store; the header line and
 * quarantined lines are not scanned.
 */
export async function redactSessionFile(file: string, options: RedactFileOptions): Promise<RedactFileReport> {
  const found: RedactionCounts = new Map();
  let entries = 0;
  const stage = redactSecretsStage(options.redactor, (_entry, counts) => {
    entries++;
    for (const [rule, n] of counts) found.set(rule, (found.get(rule) ?? 0) + n);
  });
  const { redactor, ...rest } = options;
  const migrate = await migrateFile(file, { ...rest, inPlace: true, stages: [stage] });
  const artifactsFound: RedactionCounts = new Map();
  let artifacts = 0;
  const dir = artifactsDirOf(file);
  const hasArtifacts = io.existsSync(dir);
  // A killed rewrite's temp beside the session holds it as it was: removed whether or not it has artifacts.
  if (migrate.status !== "failed" && migrate.status !== "conflict" && (hasArtifacts || options.dryRun !== true)) {
    const lock = options.dryRun ? null : await acquireSessionLock(file, { onCompromised: () => {} });
    try {
      if (lock !== null) reclaimDeadSessionTemps(file);
      if (hasArtifacts) {
        const store = new ArtifactStore(dir, { fsync: options.fsync === true });
        artifacts = scrubArtifacts(store, redactor, artifactsFound, options.dryRun === true).changed;
      }
    } finally {
      await lock?.release();
    }
  }
  return { migrate, found, entries, artifactsFound, artifacts };
}
