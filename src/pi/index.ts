/**
 * `transcript-store/pi`: pi 0.73.1's session API (`@mariozechner/pi-coding-agent`'s
 * `dist/core/session-manager`), same names, signatures and behaviour, on this store's engine.
 * Switching is one line: `import { SessionManager } from "transcript-store/pi"`. See docs/pi.md.
 */
import type { SessionManager } from "./session-manager.ts";

export { SessionManager } from "./session-manager.ts";
export { buildSessionContext, getLatestCompactionEntry } from "./context.ts";
export {
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
  CustomEntry,
  CustomMessageEntry,
  FileEntry,
  ImageContent,
  LabelEntry,
  ModelChangeEntry,
  NewSessionOptions,
  SessionContext,
  SessionEntry,
  SessionEntryBase,
  SessionHeader,
  SessionInfo,
  SessionInfoEntry,
  SessionListProgress,
  SessionMessageEntry,
  SessionTreeNode,
  TextContent,
  ThinkingLevelChangeEntry,
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
  | "getHeader"
  | "getEntries"
  | "getTree"
  | "getSessionName"
>;
