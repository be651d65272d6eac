/** The PostgreSQL layer: `PgStore` and the types of its API (docs/postgres.md). */
export type { ArtifactRewrite, PgArtifact, PgArtifactContent, PgArtifactInfo, PgArtifactListing } from "./artifacts.ts";
export { DEFAULT_ARTIFACT_CHUNK_BYTES, isStorableArtifactId, MAX_ARTIFACT_CHUNK_BYTES, PgArtifacts } from "./artifacts.ts";
export { PgBlobs } from "./blobs.ts";
export { DEFAULT_GC_GRACE_MS, type PgGcOptions, type PgGcReport } from "./gc.ts";
export { PgLeases } from "./lease.ts";
export { checkBlobSize, checkLineSize, DEFAULT_LIMITS, MAX_FIELD_BYTES, type PgLimits } from "./limits.ts";
export { type PgStoreOptions, PgStore } from "./pg-store.ts";
export { SCHEMA_VERSION } from "./schema.ts";
export type { PgForkOptions } from "./session-copies.ts";
export type { PgImportBatch, PgImportHeader, PgImportResult, PgImportSource } from "./session-import.ts";
export { DEFAULT_READ_BATCH, type PgListOptions, type PgReadOptions } from "./session-reads.ts";
export type { PgAppendResult, PgBlobWrite, PgEntry, PgLeaseRequest, PgLine, PgSession, PgSessionInfo } from "./types.ts";
