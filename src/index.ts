export { TranscriptStoreError, ERROR_CODES, isStoreError, SessionAmbiguousError, type SessionCandidate } from "./errors.ts";
export type { ErrorCode, StoreWarning, WarningCode, WarningHandler } from "./errors.ts";
export { ERROR_CATALOGUE, THROWN_CODES, WARNING_ONLY_CODES, type ErrorCodeDoc } from "./error-catalogue.ts";

export { CURRENT_VERSION } from "./format/types.ts";
export type {
  AgentMessage,
  SessionEntry,
  SessionHeader,
  MessageEntry,
  CompactionEntry,
  BranchSummaryEntry,
  ModelChangeEntry,
  ThinkingLevelChangeEntry,
  CustomEntry,
  LabelEntry,
} from "./format/types.ts";
export type { LoadReport, MalformedLine } from "./format/load-report.ts";
export { LineSplitter } from "./format/line-splitter.ts";
export type { ScannedLine } from "./format/line-splitter.ts";
export { SessionParser, parseSessionBytes } from "./format/session-parser.ts";
export type { ParsedSession } from "./format/session-parser.ts";
export { migrateSession, headerVersion } from "./format/migrate.ts";

export { MAX_ENTRY_DEPTH, prepareEntryForPersistence, prepareLine, resolvePrepareOptions } from "./prepare/pipeline.ts";
export { REDACTION_MARKER_PREFIX, resolveRedactRules, SecretRedactor } from "./prepare/redact-secrets.ts";
export type { RedactionCounts, RedactOption, SecretRuleOptions } from "./prepare/redact-secrets.ts";
export { BUILTIN_SECRET_RULES, type SecretRule } from "./prepare/secret-rules.ts";
export { redactForSharing, sharingRedactor, type SharingRedactionOptions } from "./session/redact-for-sharing.ts";
export type { PrepareOptions, PrepareStage, PreparedEntry } from "./prepare/pipeline.ts";
export { mapTree, DESCEND, REMOVE } from "./prepare/map-tree.ts";
export type { TreeMapper, SlotContext } from "./prepare/map-tree.ts";
export { DEFAULT_TRANSIENT_KEYS } from "./prepare/strip-transient-fields.ts";
export { DEFAULT_BLOB_THRESHOLD } from "./prepare/externalize-images.ts";
export type { BlobWrite } from "./prepare/externalize-images.ts";
export { DEFAULT_MAX_STRING_CHARS, TRUNCATION_SUFFIX, SIGNATURE_KEYS } from "./prepare/truncate-strings.ts";

export { BlobStore } from "./blob/blob-store.ts";
export type { BlobStoreOptions, PutResult, GetOptions } from "./blob/blob-store.ts";
export { isBlobRef, parseBlobRef, toBlobRef, BLOB_REF_PREFIX } from "./blob/blob-ref.ts";
export { isKeyedBlobRef, KEYED_BLOB_REF_PREFIX } from "./blob/keyed-blob-ref.ts";

export { SessionManager } from "./session/session-manager.ts";
export type { BuildContextOptions } from "./session/session-manager.ts";
export type { SessionManagerOptions, RehydrateMode } from "./session/session-options.ts";
export type { EncryptionOptions } from "./session/encryption-options.ts";
export type { SessionContext, SessionTreeNode } from "./session/session-tree.ts";
export { cwdBucket, defaultRoot, detectLayout, type SessionLayout } from "./session/paths.ts";

export { ArtifactStore } from "./artifacts/artifact-store.ts";
export type { ArtifactStoreOptions, SaveOptions, WriterOptions, AllocatedArtifact, ArtifactStats } from "./artifacts/artifact-store.ts";
export type { ArtifactRef } from "./artifacts/metadata.ts";
export type { ArtifactWriter } from "./artifacts/artifact-writer.ts";
export type { AgentOutputRef, AllocateAgentOutputOptions } from "./artifacts/agent-outputs.ts";
export { isPointer, toModelHint, DEFAULT_MAX_INLINE_BYTES, DEFAULT_PREVIEW_CHARS } from "./artifacts/pointer.ts";
export type { ArtifactPointer, SpillOptions, ModelHint } from "./artifacts/pointer.ts";
export { resolveInternalUrl } from "./artifacts/internal-urls.ts";
export type { ResolveInternalUrlOptions, ResolvedInternalUrl, InternalUrlSession } from "./artifacts/internal-urls.ts";
export { renderArtifactReference, expandArtifactReferences, extractArtifactBlocks } from "./artifacts/reveal.ts";
export type { RevealPolicy, ExtractedArtifacts } from "./artifacts/reveal.ts";
export { artifactTools } from "./artifacts/artifact-tools.ts";
export type { ArtifactTool } from "./artifacts/artifact-tools.ts";
export { OutputSink, DEFAULT_SPILL_THRESHOLD } from "./artifacts/output-sink.ts";
export type { OutputSinkOptions, OutputSummary } from "./artifacts/output-sink.ts";
export type { LinePage } from "./artifacts/line-pages.ts";

export type { SessionInfo } from "./session/session-info.ts";
export { PostgresBackend } from "./storage/postgres/pg-backend.ts";
export { closeUrlStores } from "./storage/store-url.ts";
export type { Blobs, SessionStorage, StorageBackend, StorageKind } from "./storage/session-storage.ts";
export type { ImportOutcome, ImportStatus, SessionSnapshot, SnapshotArtifact, SnapshotBytes } from "./storage/session-snapshot.ts";
export { bytesSource, readAllBytes, snapshotOfEntries } from "./storage/session-snapshot.ts";
export { relateSessions, relateSessionStreams, type SessionRelation } from "./storage/session-relation.ts";
export { type BackendFactory, registerBackend, type StoreConnectOptions } from "./storage/backend-registry.ts";
export { CAPABILITIES, type Capability, requireCapability, type Supports, supporting } from "./storage/capabilities.ts";
export type { AccountingDriver, MaintenanceDriver, StoreFinding, StoreStats } from "./storage/store-drivers.ts";
export type { StoreRedactOptions, StoreRedactReport, StoreRekeyReport } from "./storage/store-drivers.ts";
export { type StoredLine, prepareStoredLine, entriesOf, parseHeader, storedLineRow } from "./storage/stored-lines.ts";
export { verifiedSnapshotBlob } from "./storage/session-snapshot.ts";
export { PgStore } from "./storage/postgres/db/index.ts";
export type { PgStoreOptions } from "./storage/postgres/db/index.ts";
export type { ForkOptions } from "./session/session-manager.ts";
export { bundle, type BundleOptions } from "./bundle/bundle-pack.ts";
export { unbundle, type UnbundleOptions, type UnbundleReport, type UnbundledSession } from "./bundle/bundle-restore.ts";
export type { BundleManifest, ManifestMember, ManifestSession } from "./bundle/bundle-manifest.ts";
export type { CwdMapping } from "./bundle/cwd-map.ts";
export { migrateFile } from "./maintenance/migrate-file.ts";
export type { MigrateFileOptions, MigrateFileReport } from "./maintenance/migrate-file.ts";
export { verifySessionFile } from "./maintenance/verify.ts";
export type { Finding, VerifyFileResult } from "./maintenance/verify.ts";
export { rekeySessionFile } from "./maintenance/rekey.ts";
export type { RekeyOptions, RekeyReport } from "./maintenance/rekey.ts";
export { keyIdOf } from "./crypto/line-cipher.ts";
export type { StoreKey } from "./crypto/line-cipher.ts";
export { collectGarbage, DEFAULT_GC_GRACE_MS } from "./maintenance/gc.ts";
export { forgetReferrers, readReferrers } from "./blob/blob-referrers.ts";
export type { Referrer } from "./blob/blob-referrers.ts";
export type { GcOptions, GcReport } from "./maintenance/gc.ts";
export { main } from "./cli/load-main.ts";
export type { CliIo } from "./cli/context.ts";

// Accounting and the usage ledger (issue 24)
export { SessionAccountant } from "./accounting/session-account.ts";
export type { AccountantState, AccountedLine, SessionAccount } from "./accounting/session-account.ts";
export { BYTE_KINDS, classifyRecords, emptyByteKinds } from "./accounting/line-kinds.ts";
export type { ByteKinds } from "./accounting/line-kinds.ts";
export { spaceRows, spaceTotals } from "./accounting/du-report.ts";
export type { SessionSpace, SpaceGrouping, SpaceRow, SpaceTotals } from "./accounting/du-report.ts";
export { usageRowOf } from "./accounting/usage-rows.ts";
export type { UsageCost, UsageProblem, UsageRow, UsageSource, UsageTokens } from "./accounting/usage-rows.ts";
export { dropCopies, groupUsage, mergeLedger, parseTimeBound } from "./accounting/usage-report.ts";
export type { LedgerRow, UsageGroup, UsageGrouping, UsageWindow } from "./accounting/usage-report.ts";
export { accountStore, ledgerPathOf, recordDeletedUsage, storeLedger, storeSpace, storeUsage } from "./maintenance/store-accounting.ts";
export type { AccountingOptions, RecordedUsage, StoreAccounting, UsageReport } from "./maintenance/store-accounting.ts";
export { accountSessionFile } from "./maintenance/file-accounting.ts";
export { USAGE_LEDGER_FILE } from "./maintenance/usage-ledger-file.ts";
export type { LedgerProblem } from "./maintenance/usage-ledger-file.ts";
export { openSessionIndex, HIGHLIGHT_START, HIGHLIGHT_END } from "./search/session-index.ts";
export type {
  SessionIndex,
  SessionIndexOptions,
  SearchOptions,
  SearchHit,
  IndexStatus,
  IndexRefreshReport,
  SearchRole,
  IndexProgress,
} from "./search/session-index.ts";
export type { ListIndexMode } from "./session/discovery.ts";
export { SEARCH_ROLES } from "./search/entry-text.ts";
export { Lifecycle } from "./lifecycle/lifecycle.ts";
export type { LifecycleOptions, PurgeInfo, PurgeOptions, PurgeReport, PruneReport } from "./lifecycle/lifecycle.ts";
export type { LifecycleDriver, TrashEntry } from "./lifecycle/lifecycle-driver.ts";
export type { SessionFlags } from "./lifecycle/lifecycle-log.ts";
export type { LifecycleListOptions } from "./lifecycle/listing-flags.ts";
export type { PruneCandidate, PrunePlan } from "./lifecycle/prune-plan.ts";
export {
  DEFAULT_TRASH_RETAIN_DAYS,
  RETENTION_ENV,
  loadRetentionConfig,
  validateRetentionConfig,
  parseAge,
  parseSize,
} from "./lifecycle/retention-config.ts";
export type { PrunePolicy, RetentionConfig } from "./lifecycle/retention-config.ts";
export { exportSession, VIEW_RENDERERS } from "./interchange/export-session.ts";
export type { ExportSessionOptions, ViewFormat } from "./interchange/export-session.ts";
export { ATIF_SCHEMA_VERSION } from "./interchange/atif.ts";
export type { AtifOptions } from "./interchange/atif.ts";
export { validateAtif, ATIF_VERSIONS } from "./interchange/atif-validate.ts";
export type { AtifProblem } from "./interchange/atif-validate.ts";

// Other agents' transcripts in and out (issue 25)
export { importClaudeCode, importCodex, importForeign, importForeignFile } from "./interchange/import-foreign.ts";
export type { ForeignImportOptions, ForeignImportReport } from "./interchange/import-foreign.ts";
export { exportClaudeCode, exportCodex, exportForeign, foreignLineBytes } from "./interchange/export-foreign.ts";
export type { ForeignExportLine, ForeignExportSummary } from "./interchange/export-foreign.ts";
export { defaultForeignTree } from "./interchange/foreign-files.ts";
export type { ForeignField, InterchangeFormat } from "./interchange/foreign-entry.ts";
export type { ForeignCounts, ForeignProblem } from "./interchange/build-foreign-session.ts";
export type { ForeignExportOptions } from "./interchange/export-foreign.ts";
export { subagentOf } from "./interchange/foreign-entry.ts";
export type { SubagentLink } from "./interchange/foreign-entry.ts";
export type { ForeignParent } from "./interchange/foreign-mapper.ts";
