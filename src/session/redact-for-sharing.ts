import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { resolveRedactRules, SecretRedactor, type RedactionCounts, type RedactOption } from "../prepare/redact-secrets.ts";
import { defaultRoot } from "./paths.ts";
import { readRedactionKey } from "../crypto/redaction-key.ts";
import { REDACTION_KEY_FILE_ENV, readRedactionKeyFile } from "../crypto/redaction-key-slot.ts";

/** How shared output (export, views, bundles) is redacted. */
export interface SharingRedactionOptions {
  /** The store root whose key makes the markers (equal to the stored ones). @default $TRANSCRIPT_STORE_HOME, else ~/.transcript-store */
  root?: string;
  /** The rules. @default "secrets" */
  redact?: RedactOption;
  /** A key of your own instead of the store's. */
  key?: Uint8Array;
}

/**
 * The redactor for output that leaves the store. It uses the key given, else the key file
 * `$TRANSCRIPT_STORE_REDACTION_KEY_FILE` names, else the store's key when the store has one, so
 * a secret redacted on write and one redacted on export show the same marker; a store without a key
 * gets a random one for this redactor (a read-only export creates no file): markers then correlate
 * within the output only.
 */
export function sharingRedactor(options: SharingRedactionOptions = {}): SecretRedactor {
  const rules = resolveRedactRules(options.redact ?? "secrets");
  if (options.key !== undefined) {
    const given = options.key;
    return new SecretRedactor(rules, () => given);
  }
  const shared = process.env[REDACTION_KEY_FILE_ENV];
  if (shared !== undefined && shared.length > 0) {
    const path = resolve(shared);
    return new SecretRedactor(rules, () => readRedactionKeyFile(path));
  }
  const root = options.root !== undefined ? resolve(options.root) : defaultRoot();
  let key: Uint8Array | undefined;
  return new SecretRedactor(rules, () => {
    if (key === undefined) key = readRedactionKey(root) ?? randomBytes(32);
    return key;
  });
}

/**
 * `value` (an entry, a header, any JSON value, or a string) as it may be shared: every secret in
 * its strings replaced by a marker; ids, keys, blob refs and image payloads untouched; the same
 * object when nothing was found (the input is never mutated). Pass a `SecretRedactor` (from
 * `sharingRedactor`) when redacting many values; `counts` (rule id → secrets) is added to.
 * Every exporter calls this unless the user opted out (`--no-redact`).
 */
export function redactForSharing<T>(
  value: T,
  redactor: SecretRedactor | SharingRedactionOptions = {},
  counts: RedactionCounts = new Map(),
): T {
  const r = redactor instanceof SecretRedactor ? redactor : sharingRedactor(redactor);
  return typeof value === "string" ? (r.redactText(value, counts) as T) : r.redactValue(value, counts);
}

/**
 * Raw bytes (a damaged line) with secrets redacted: read as latin1, so every byte survives as it
 * was except the secrets (all ASCII) replaced by their markers.
 */
export function redactBytesForSharing(bytes: Buffer, redactor: SecretRedactor, counts: RedactionCounts): Buffer {
  const text = bytes.toString("latin1");
  const out = redactor.redactText(text, counts);
  return out === text ? bytes : Buffer.from(out, "latin1");
}
