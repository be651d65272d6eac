/**
 * The types of pi 0.73.1's session API (`dist/core/session-manager.d.ts`), declared here so this
 * entry point needs none of pi's packages. Message types are structural: any pi message fits.
 */

export const CURRENT_SESSION_VERSION = 3;

/** As `@mariozechner/pi-ai` declares it. */
export interface TextContent {
  type: "text";
  text: string;
  textSignature?: string;
}

/** As `@mariozechner/pi-ai` declares it. */
export interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
}

/**
 * Any message pi's agent keeps (user, assistant, toolResult, custom, bashExecution, summaries, …).
 * The index signature is `any` on purpose: only that one accepts pi's message interfaces as they are.
 */
export interface AgentMessage {
  role: string;
  // biome-ignore lint/suspicious/noExplicitAny: pi's own message type is open in the same way
  [key: string]: any;
}

/** What `appendMessage` accepts: pi's Message | CustomMessage | BashExecutionMessage. */
export type Message = AgentMessage;
export type CustomMessage = AgentMessage & { role: "custom" };
export type BashExecutionMessage = AgentMessage & { role: "bashExecution" };

export interface SessionHeader {
  type: "session";
  version?: number;
  id: string;
  timestamp: string;
  cwd: string;
  parentSession?: string;
}

export interface NewSessionOptions {
  id?: string;
  parentSession?: string;
}

export interface SessionEntryBase {
  type: string;
  id: string;
  parentId: string | null;
  timestamp: string;
}

export interface SessionMessageEntry extends SessionEntryBase {
  type: "message";
  message: AgentMessage;
}

export interface ThinkingLevelChangeEntry extends SessionEntryBase {
  type: "thinking_level_change";
  thinkingLevel: string;
}

export interface ModelChangeEntry extends SessionEntryBase {
  type: "model_change";
  provider: string;
  modelId: string;
}

export interface CompactionEntry<T = unknown> extends SessionEntryBase {
  type: "compaction";
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: T;
  fromHook?: boolean;
}

export interface BranchSummaryEntry<T = unknown> extends SessionEntryBase {
  type: "branch_summary";
  fromId: string;
  summary: string;
  details?: T;
  fromHook?: boolean;
}

export interface CustomEntry<T = unknown> extends SessionEntryBase {
  type: "custom";
  customType: string;
  data?: T;
}

export interface LabelEntry extends SessionEntryBase {
  type: "label";
  targetId: string;
  label: string | undefined;
}

export interface SessionInfoEntry extends SessionEntryBase {
  type: "session_info";
  name?: string;
}

export interface CustomMessageEntry<T = unknown> extends SessionEntryBase {
  type: "custom_message";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  details?: T;
  display: boolean;
}

export type SessionEntry =
  | SessionMessageEntry
  | ThinkingLevelChangeEntry
  | ModelChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | SessionInfoEntry;

/** A line of a session file: the header or an entry. */
export type FileEntry = SessionHeader | SessionEntry;

export interface SessionTreeNode {
  entry: SessionEntry;
  children: SessionTreeNode[];
  label?: string;
  labelTimestamp?: string;
}

export interface SessionContext {
  messages: AgentMessage[];
  thinkingLevel: string;
  model: { provider: string; modelId: string } | null;
}

export interface SessionInfo {
  path: string;
  id: string;
  /** Working directory where the session was started. Empty string for old sessions. */
  cwd: string;
  /** User-defined display name from session_info entries. */
  name?: string;
  /** Path to the parent session (if this session was forked). */
  parentSessionPath?: string;
  created: Date;
  modified: Date;
  messageCount: number;
  firstMessage: string;
  allMessagesText: string;
}

export type SessionListProgress = (loaded: number, total: number) => void;
