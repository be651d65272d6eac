import type { EntryDraft, InterchangeFormat, MappedLine } from "./foreign-entry.ts";

/** Where the first entry made from a record hangs: under the entry made last from another record, a root, or the previous entry. */
export type Placement = { under: number } | "root" | "previous";

/**
 * One agent's transcript format as import sees it: a pure, stateful reader of its records in file
 * order. The builder (`build-foreign-session.ts`) gives the drafts ids, parents and timestamps.
 */
export interface ForeignMapper {
  readonly format: InterchangeFormat;
  /** Maps one record (any JSON value) to entry drafts: the first draft gets the record. */
  map(value: unknown): MappedLine;
  /** Where the record's first entry goes, given the drafts made so far (`drafts` is their count). */
  placement(value: unknown): Placement;
  /** The record's last draft got index `index` (children of the record hang there). */
  placed(value: unknown, index: number): void;
  /** True when the record has this format's shape (a file with none is refused: wrong format). */
  recognizes(value: unknown): boolean;
  /** The source's own session id (the key of the derived id), once seen. */
  sourceId(): string | null;
  /** The working directory the source names, once seen. */
  cwd(): string | null;
  /** For a subagent's transcript: the session that spawned it (the source's own id) and how it names the subagent. */
  parent(): ForeignParent | null;
}

/** A subagent transcript's parent: the source id of the session that spawned it, and the source's own fields about the spawn. */
export interface ForeignParent {
  sessionId: string;
  [key: string]: unknown;
}

export type { EntryDraft };
