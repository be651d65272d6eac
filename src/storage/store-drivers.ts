import type { SessionSpace } from "../accounting/du-report.ts";
import type { SessionAccount } from "../accounting/session-account.ts";
import type { LedgerRow } from "../accounting/usage-report.ts";
import type { UsageRow } from "../accounting/usage-rows.ts";
import type { RedactionCounts, SecretRedactor } from "../prepare/redact-secrets.ts";
import type { StoreKey } from "../crypto/line-cipher.ts";

/**
 * The optional drivers of the storage seam beyond `lifecycle()` and `index()` (docs/architecture.md,
 * "Capabilities"): a backend that declares `supports.accounting` returns an `AccountingDriver` from
 * `accounting()`, one that declares `supports.maintenance` a `MaintenanceDriver` from `maintenance()`.
 */

/** `du`, `usage` and the ledger of deleted sessions, over a store's own rows. */
export interface AccountingDriver {
  /** Every session accounted for, streaming (`onSession` before each), and the store's blob sizes. */
  accountStore(
    onSession?: (id: string) => void | Promise<void>,
  ): Promise<{ spaces: SessionSpace[]; accounts: SessionAccount[]; blobSizes: Map<string, number> }>;
  /** One session (`ref`: what `open` takes), or null when there is none. */
  accountSession(ref: string): Promise<SessionAccount | null>;
  /** The usage ledger of deleted sessions. */
  readLedger(): Promise<LedgerRow[]>;
  /** Records rows in the ledger (a row recorded before is not written twice): how many were written. */
  appendLedger(rows: readonly UsageRow[], deletedAt: Date): Promise<number>;
}

/** What `stats` reports of a store. */
export interface StoreStats {
  sessions: number;
  sessionBytes: number;
  blobs: number;
  blobBytes: number;
  references: number;
  referencedBlobs: number;
  dedupRatio: number;
}

/** A problem `verify` finds in a store's blobs (its sessions are verified through the seam). */
export interface StoreFinding {
  kind: string;
  session: string | null;
  message: string;
}

/** What `redact --store` did to one session. */
export interface StoreRedactReport {
  id: string;
  /** `redacted`: rewritten; `planned`: a dry run would; `clean`: nothing found; `encrypted`: not scanned (ciphertext). */
  status: "redacted" | "planned" | "clean" | "encrypted";
  /** Secrets found per rule (never the secrets). */
  found: RedactionCounts;
  /** Entries in which something was found. */
  entries: number;
}

export interface StoreRedactOptions {
  dryRun?: boolean;
  /** Called with the session as it is, under the lease, before it is rewritten (a backup); a throw rewrites nothing. */
  beforeRewrite?: (headerLine: string, lines: readonly string[]) => Promise<void>;
}

/** What `rekey --store` did to one session. */
export interface StoreRekeyReport {
  id: string;
  entries: number;
  fromKeyId: string;
  toKeyId: string;
  /** Artifacts and agent outputs sealed again under the new key. */
  artifacts: number;
}

/**
 * Whole-store maintenance: `stats`, the blob half of `verify`, and whole-session rewrites in one
 * transaction under the session's lease (`rekey --store`, `redact --store`) with the store's own
 * redaction key.
 */
export interface MaintenanceDriver {
  stats(): Promise<StoreStats>;
  /** Referenced blobs that are absent, and (with `rehash`) blobs that do not hash to their name. */
  verifyBlobs(options: { rehash: boolean }): Promise<StoreFinding[]>;
  rekeySession(ref: string, keys: { from: StoreKey; to: StoreKey }): Promise<StoreRekeyReport>;
  redactSession(id: string, redactor: SecretRedactor, options: StoreRedactOptions): Promise<StoreRedactReport>;
  /** The id of the session `ref` names (an id or a prefix of one). */
  sessionIdOf(ref: string): Promise<string>;
  /** The store's redaction key (made on first use). */
  redactionKey(): Promise<Uint8Array>;
  /** The store's redaction key if it has one (a dry run makes none). */
  sharingRedactionKey(): Promise<Uint8Array | null>;
  /** Indexes these sessions again at once (redact rewrote them or scrubbed their artifacts): no derived row keeps the old text. */
  reindexSearch(ids: readonly string[]): Promise<void>;
}
