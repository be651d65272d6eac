import { createHash } from "node:crypto";
import type { SessionEntry } from "../format/types.ts";
import { isRecord } from "../format/types.ts";
import type { ForeignLine } from "./foreign-lines.ts";

/** The agents whose transcripts import and export (`--from` / `--to`). */
export type InterchangeFormat = "claude-code" | "codex";

/**
 * What an imported entry carries of its source, under the entry field `foreign` (docs/interchange.md):
 * the first entry made from a line holds the line's record whole (`record`), or, for a damaged
 * line, its exact text (`damaged`); further entries made from the same line only name it (`part`).
 */
export interface ForeignField {
  format: InterchangeFormat;
  /** 1-based line of the source file. */
  line: number;
  record?: unknown;
  part?: number;
  damaged?: { code: string; reason: string; text?: string; base64?: string; terminated: boolean };
}

/** The entry field that carries the source. */
export const FOREIGN_FIELD = "foreign";

/** The `foreign` field of an entry, or null when the entry was not imported. */
export function foreignOf(entry: SessionEntry): ForeignField | null {
  const f = entry[FOREIGN_FIELD];
  return isRecord(f) && (f.format === "claude-code" || f.format === "codex") && typeof f.line === "number"
    ? (f as unknown as ForeignField)
    : null;
}

/**
 * A session id derived from the source's own id, so that importing the same transcript again finds
 * the same session: a UUID (RFC 9562 version 8, "custom") from sha256 of `<format>:<key>`.
 */
export function derivedSessionId(format: InterchangeFormat, key: string): string {
  const h = createHash("sha256").update(`${format}:${key}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Derived entry ids (8 hex digits of sha256 of `<session id>:<n>`, retried on a collision), like migration's. */
export class EntryIds {
  private readonly taken = new Set<string>();
  private n = 0;
  constructor(private readonly sessionId: string) {}

  /** Marks an id as used (an entry carried with its own id). */
  take(id: string): void {
    this.taken.add(id);
  }

  next(): string {
    const n = this.n++;
    for (let attempt = 0; ; attempt++) {
      const seed = attempt === 0 ? `${this.sessionId}:${n}` : `${this.sessionId}:${n}:${attempt}`;
      const id = createHash("sha256").update(seed).digest("hex").slice(0, 8);
      if (!this.taken.has(id)) {
        this.taken.add(id);
        return id;
      }
    }
  }
}

/** The entry field naming the subagent session an entry spawned (docs/interchange.md, Subagents). */
export const SUBAGENT_FIELD = "subagent";

/** What `SUBAGENT_FIELD` holds: the subagent's session id in the store (derived, as its import gives it) and the spawning tool call. */
export interface SubagentLink {
  session: string;
  toolCallId: string | null;
}

/** The `subagent` link of an entry, or null. */
export function subagentOf(entry: SessionEntry): SubagentLink | null {
  const s = entry[SUBAGENT_FIELD];
  return isRecord(s) && typeof s.session === "string" ? (s as unknown as SubagentLink) : null;
}

/** What a mapper makes of one line: entries without ids yet (the first carries the source). */
export type EntryDraft = { type: string; [key: string]: unknown };

/** How a line was accounted for (the report's columns). */
export type LineOutcome = "mapped" | "kept" | "damaged";

/** Problems a mapper reports (besides the line problems). */
export type MappingProblem = "UNKNOWN_RECORD_TYPE" | "NOT_A_RECORD";

/** A mapper's answer for one record. */
export interface MappedLine {
  drafts: EntryDraft[];
  outcome: Exclude<LineOutcome, "damaged">;
  problem?: { code: MappingProblem; reason: string };
}

/** A kept-whole record: a `custom` entry that holds it, not sent to the model. */
export function keptDraft(format: InterchangeFormat, what: string): EntryDraft {
  return { type: "custom", customType: `${format}:${what}` };
}

/** A damaged line kept as a `custom` entry with its exact text or bytes. */
export function damagedDraft(format: InterchangeFormat, line: Extract<ForeignLine, { kind: "damaged" }>): EntryDraft {
  const damaged: ForeignField["damaged"] = { code: line.code, reason: line.reason, terminated: line.terminated };
  if (line.text !== undefined) damaged.text = line.text;
  if (line.base64 !== undefined) damaged.base64 = line.base64;
  return { type: "custom", customType: `${format}:damaged`, [FOREIGN_FIELD]: { format, line: line.line, damaged } };
}

/** Milliseconds of an ISO time, or undefined. */
export function millisOf(timestamp: unknown): number | undefined {
  if (typeof timestamp !== "string") return undefined;
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? undefined : t;
}
