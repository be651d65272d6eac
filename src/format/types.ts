/** The current session file format version (docs/format.md, Versions and migrations). */
export const CURRENT_VERSION = 3;

/** Line 1 of a session file. Unknown fields are kept. */
export interface SessionHeader {
  type: "session";
  version?: number;
  id: string;
  timestamp: string;
  cwd: string;
  parentSession?: string;
  title?: string;
  [key: string]: unknown;
}

/** Any entry line: a node of the session tree. Unknown types and fields are preserved. */
export interface SessionEntry {
  type: string;
  id: string;
  parentId: string | null;
  timestamp: string;
  [key: string]: unknown;
}

/** A chat message as pi/omp persist it; only `role` is interpreted here. */
export interface AgentMessage {
  role: string;
  content?: unknown;
  [key: string]: unknown;
}

export interface MessageEntry extends SessionEntry {
  type: "message";
  message: AgentMessage;
}

export interface CompactionEntry extends SessionEntry {
  type: "compaction";
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: unknown;
}

export interface BranchSummaryEntry extends SessionEntry {
  type: "branch_summary";
  fromId: string;
  summary: string;
}

export interface ModelChangeEntry extends SessionEntry {
  type: "model_change";
  model: unknown;
  role?: string;
}

export interface ThinkingLevelChangeEntry extends SessionEntry {
  type: "thinking_level_change";
  thinkingLevel: string;
}

export interface CustomEntry extends SessionEntry {
  type: "custom";
  customType: string;
  data?: unknown;
}

export interface LabelEntry extends SessionEntry {
  type: "label";
  targetId: string;
  label: string;
}

/** A JSON object as read from a line, before migration gives it ids. */
export type RawRecord = Record<string, unknown>;

/** Narrows a parsed JSON value to a plain object. */
export function isRecord(value: unknown): value is RawRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
