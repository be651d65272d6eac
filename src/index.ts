export { TranscriptStoreError, ERROR_CODES, isStoreError } from "./errors.ts";
export type { ErrorCode, StoreWarning, WarningCode, WarningHandler } from "./errors.ts";

export { CURRENT_VERSION } from "./format/types.ts";
export type { AgentMessage, SessionEntry, SessionHeader, MessageEntry, CompactionEntry, BranchSummaryEntry, ModelChangeEntry, ThinkingLevelChangeEntry, CustomEntry, LabelEntry } from "./format/types.ts";
export type { LoadReport, MalformedLine } from "./format/load-report.ts";
export { LineSplitter } from "./format/line-splitter.ts";
export type { ScannedLine } from "./format/line-splitter.ts";
export { SessionParser, parseSessionBytes } from "./format/session-parser.ts";
export type { ParsedSession } from "./format/session-parser.ts";
export { migrateSession, headerVersion } from "./format/migrate.ts";

export { prepareEntryForPersistence, prepareLine, resolvePrepareOptions } from "./prepare/pipeline.ts";
export type { PrepareOptions, PrepareStage, PreparedEntry } from "./prepare/pipeline.ts";
export { DEFAULT_TRANSIENT_KEYS } from "./prepare/strip-transient-fields.ts";
export { DEFAULT_BLOB_THRESHOLD } from "./prepare/externalize-images.ts";
export type { BlobWrite } from "./prepare/externalize-images.ts";
export { DEFAULT_MAX_STRING_CHARS, TRUNCATION_SUFFIX, SIGNATURE_KEYS } from "./prepare/truncate-strings.ts";

export { BlobStore } from "./blob/blob-store.ts";
export type { BlobStoreOptions, PutResult, GetOptions } from "./blob/blob-store.ts";
export { isBlobRef, parseBlobRef, toBlobRef, BLOB_REF_PREFIX } from "./blob/blob-ref.ts";

export { SessionManager } from "./session/session-manager.ts";
export type { BuildContextOptions } from "./session/session-manager.ts";
export type { SessionManagerOptions, RehydrateMode } from "./session/session-options.ts";
export type { SessionContext, SessionTreeNode } from "./session/session-tree.ts";
export { cwdBucket, defaultRoot } from "./session/paths.ts";

export { ArtifactStore } from "./artifacts/artifact-store.ts";
