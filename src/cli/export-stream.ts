import { BlobStore } from "../blob/blob-store.ts";
import type { StoreWarning } from "../errors.ts";
import type { RedactionCounts } from "../prepare/redact-secrets.ts";
import { redactForSharing, type SharingRedactionOptions, sharingRedactor } from "../session/redact-for-sharing.ts";
import { rehydrateValue } from "../session/rehydrate.ts";
import type { ResolvedSessionManagerOptions } from "../session/session-options.ts";
import type { streamableFile } from "../storage/session-file-lines.ts";

/** What `export` (NDJSON) does with a clean session file read a line at a time. */
export interface StreamedExport {
  /** Keep blob refs as stored (`--refs`); else images are inlined again. */
  refs: boolean;
  /** null: `--no-redact`. */
  redact: SharingRedactionOptions | null;
  write: (record: string) => void;
  onWarning: (w: StoreWarning) => void;
}

/**
 * The NDJSON export of a clean session file (`streamableFile`), a line at a time: the header, then
 * each entry as stored (`refs`) or with its images inlined, each redacted for sharing unless asked
 * otherwise. The session is never held whole; an entry is (an inlined image with it). Returns the
 * secrets replaced, per rule.
 */
export async function exportStreamed(
  file: NonNullable<Awaited<ReturnType<typeof streamableFile>>>,
  options: ResolvedSessionManagerOptions,
  how: StreamedExport,
): Promise<RedactionCounts> {
  const redactor = how.redact === null ? null : sharingRedactor(how.redact);
  const counts: RedactionCounts = new Map();
  const share = <T>(value: T): T => (redactor === null ? value : redactForSharing(value, redactor, counts));
  const blobs = new BlobStore(options.blobsDir, { readOnly: true });
  how.write(`${JSON.stringify(share(file.header))}\n`);
  for await (const line of file.lines()) {
    if (line.trim().length === 0) continue; // a blank line is no entry (the loader skips it too)
    const entry: unknown = JSON.parse(line);
    how.write(`${JSON.stringify(share(how.refs ? entry : rehydrateValue(entry, blobs, how.onWarning)))}\n`);
  }
  return counts;
}
