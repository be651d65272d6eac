/**
 * The types of pi 1.5.2's session API (`@earendil-works/pi-coding-agent`'s
 * `dist/core/session-manager.d.ts`), declared here so this entry point needs none of pi's
 * packages. Message types are structural: any pi message fits.
 */

export const CURRENT_SESSION_VERSION = 3;

/** As `@earendil-works/pi-ai` declares it. */
export interface TextContent {
  type: "text";
  text: string;
  textSignature?: string;
}

/** As `@earendil-works/pi-ai` declares it. */
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

/** Token counts and cost of a model call (pi-ai's `Usage`, kept open: pi adds fields over time). */
export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number; [key: string]: unknown };
  // biome-ignore lint/suspicious/noExplicitAny: pi-ai's Usage grows optional fields; any accepts every version of it
  [key: string]: any;
}

/**
 * A system-role message (pi-ai's `SystemMessage`): the leading one holds the base prompt and the
 * tools, later ones append instructions, patch `sections` by name (`null` removes one) and add or
 * remove tools.
 */
export interface SystemMessage {
  role: "system";
  content: string | TextContent[];
  sections?: Record<string, string | null>;
  // biome-ignore lint/suspicious/noExplicitAny: pi-ai's Tool (a TypeBox schema inside)
  toolsAdded?: any[];
  toolsRemoved?: { name: string }[];
  timestamp: number;
}

/** Model-attributed usage that is no part of the model's context (`kind`: any category, e.g. "cache_warm"). */
export interface UsageEntry extends SessionEntryBase {
  type: "usage";
  kind: string;
  provider: string;
  model: string;
  usage: Usage;
  note?: string;
}

export interface CompactionEntry<T = unknown> extends SessionEntryBase {
  type: "compaction";
  summary: string;
  /** The first entry kept before the compaction; its own id when none is kept (retain-none). */
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: T;
  usage?: Usage;
  fromHook?: boolean;
  /** The complete prompt and tool state at this compaction (what the system messages it hides added up to). */
  systemMessage?: SystemMessage;
}

export interface BranchSummaryEntry<T = unknown> extends SessionEntryBase {
  type: "branch_summary";
  fromId: string;
  summary: string;
  details?: T;
  usage?: Usage;
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

/** What a context edit may put in place of an entry's content (user, assistant, tool result or custom content). */
export type ContextEditableContent = string | AgentMessage["content"];

/** A branch-relative change to an earlier entry's contribution to the context: the latest on the path wins. */
export interface ContextEditEntry extends SessionEntryBase {
  type: "context_edit";
  targetId: string;
  /** null leaves the target out of the context; otherwise its content is replaced. */
  replacement: { content: ContextEditableContent } | null;
}

export type SessionEntry =
  | SessionMessageEntry
  | ThinkingLevelChangeEntry
  | ModelChangeEntry
  | UsageEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | ContextEditEntry
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

/** One entry of the context and the messages it contributes (after context edits). */
export interface ProjectedSessionEntry {
  sourceEntry: SessionEntry;
  messages: AgentMessage[];
}

/** The context with each message's source entry kept (`buildSessionProjection`). */
export interface SessionProjection {
  entries: ProjectedSessionEntry[];
  messages: AgentMessage[];
  thinkingLevel: string;
  model: { provider: string; modelId: string } | null;
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

/** Progress of `list`/`listAll`: `partialSessions`, the sessions read so far sorted by activity, on some calls. */
export type SessionListProgress = (loaded: number, total: number, partialSessions?: readonly SessionInfo[]) => void;
