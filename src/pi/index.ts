/**
 * `transcript-store/pi`: pi 1.5.2's session API (`@earendil-works/pi-coding-agent`'s
 * `dist/core/session-manager`), same names, signatures and behaviour, on this store's engine.
 * Switching is one line: `import { SessionManager } from "transcript-store/pi"`. See docs/pi.md.
 */
import type { SessionManager } from "./session-manager.ts";

export { SessionManager, type PiSessionOptions } from "./session-manager.ts";
export {
  buildContextEntries,
  buildSessionContext,
  buildSessionProjection,
  getLatestCompactionEntry,
  projectContextEntry,
  sessionEntryToContextMessages,
} from "./context.ts";
export {
  assertValidSessionId,
  findMostRecentSession,
  getDefaultSessionDir,
  loadEntriesFromFile,
  migrateSessionEntries,
  parseSessionEntries,
} from "./file-entries.ts";
export type { PiStoreOptions } from "./options.ts";
export { CURRENT_SESSION_VERSION } from "./types.ts";
export type {
  AgentMessage,
  BranchSummaryEntry,
  CompactionEntry,
  ContextEditableContent,
  ContextEditEntry,
  CustomEntry,
  CustomMessageEntry,
  FileEntry,
  ImageContent,
  LabelEntry,
  ModelChangeEntry,
  NewSessionOptions,
  ProjectedSessionEntry,
  SessionContext,
  SessionEntry,
  SessionEntryBase,
  SessionHeader,
  SessionInfo,
  SessionInfoEntry,
  SessionListProgress,
  SessionMessageEntry,
  SessionProjection,
  SessionTreeNode,
  SystemMessage,
  TextContent,
  ThinkingLevelChangeEntry,
  Usage,
  UsageEntry,
} from "./types.ts";

/** The read-only view pi hands to extensions. */
export type ReadonlySessionManager = Pick<
  SessionManager,
  | "getCwd"
  | "getSessionDir"
  | "getSessionId"
  | "getSessionFile"
  | "getLeafId"
  | "getLeafEntry"
  | "getEntry"
  | "getLabel"
  | "getBranch"
  | "buildContextEntries"
  | "buildSessionProjection"
  | "getHeader"
  | "getEntries"
  | "getTree"
  | "getSessionName"
>;
