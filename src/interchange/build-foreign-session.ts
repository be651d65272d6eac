import { CURRENT_VERSION, type SessionEntry, type SessionHeader } from "../format/types.ts";
import {
  damagedDraft,
  derivedSessionId,
  EntryIds,
  FOREIGN_FIELD,
  foreignOf,
  type EntryDraft,
  type ForeignField,
  type InterchangeFormat,
} from "./foreign-entry.ts";
import type { ForeignLine } from "./foreign-lines.ts";
import type { ForeignMapper } from "./foreign-mapper.ts";

/** One problem of a source file: its line, a code, why. */
export interface ForeignProblem {
  line: number;
  code: string;
  reason: string;
}

/** How every line of a source file was accounted for: `records = mapped + kept + damaged`. */
export interface ForeignCounts {
  /** Lines read (every line of the file: records and damaged ones). */
  records: number;
  /** Lines mapped to messages (or a compaction) the model sees. */
  mapped: number;
  /** Lines kept whole as `custom` entries. */
  kept: number;
  /** Lines that are not JSON records (kept as `custom` entries with their exact text). */
  damaged: number;
}

/** A source file as a v3 session (pure: no I/O). */
export interface ForeignSession {
  header: SessionHeader;
  entries: SessionEntry[];
  counts: ForeignCounts;
  problems: ForeignProblem[];
  /** The source's own session id (null: none found, the file name was used). */
  sourceId: string | null;
  /** True when no line had this format's shape (and there were records): the wrong `--from`. */
  unrecognized: boolean;
}

/** What the build needs besides the lines. */
export interface BuildForeignOptions {
  /** The key of the derived session id when the source names none (the file name without `.jsonl`). */
  fallbackKey: string;
  /** The cwd when the source names none. @default "/" */
  fallbackCwd?: string;
  /**
   * Torn-line entries the store's copy of this session holds, by source line (`staleTornEntries`):
   * a last line that was still being written at an earlier import. They are carried again, as
   * they are, before that line's entries, so the store's copy stays a beginning of the session
   * and the import appends what followed. @default none
   */
  storedTorn?: ReadonlyMap<number, readonly SessionEntry[]>;
}

const EPOCH = "1970-01-01T00:00:00.000Z";

interface Draft {
  /** An entry carried as the store holds it (id, parent and all). */
  fixed?: SessionEntry;
  fields: EntryDraft;
  parent: number | null;
  timestamp: string | null;
}

/**
 * Reads a foreign transcript's lines into a v3 header and entries: each line's first entry carries
 * it whole under `foreign` (docs/interchange.md); a damaged line becomes a `custom` entry with its
 * exact text. Ids are derived from the source's session id, so the same source gives the same
 * session, entry for entry.
 */
export async function buildForeignSession(
  lines: AsyncIterable<ForeignLine>,
  mapper: ForeignMapper,
  options: BuildForeignOptions,
): Promise<ForeignSession> {
  const format: InterchangeFormat = mapper.format;
  const drafts: Draft[] = [];
  const counts: ForeignCounts = { records: 0, mapped: 0, kept: 0, damaged: 0 };
  const problems: ForeignProblem[] = [];
  let recognized = 0;
  let lastTimestamp: string | null = null;
  let firstTimestamp: string | null = null;

  const add = (made: EntryDraft[], first: ForeignField, parent: number | null, timestamp: string | null): number => {
    made.forEach((fields, i) => {
      const foreign: ForeignField = i === 0 ? first : { format, line: first.line, part: i };
      drafts.push({ fields: { ...fields, [FOREIGN_FIELD]: foreign }, parent: i === 0 ? parent : drafts.length - 1, timestamp });
    });
    return drafts.length - 1;
  };
  const previous = () => (drafts.length === 0 ? null : drafts.length - 1);

  for await (const line of lines) {
    counts.records++;
    const stale = options.storedTorn?.get(line.line) ?? [];
    for (const fixed of stale) drafts.push({ fixed, fields: fixed, parent: null, timestamp: fixed.timestamp });
    const lastStale = stale[stale.length - 1];
    const again = line.kind === "damaged" && lastStale !== undefined && foreignOf(lastStale)?.damaged?.text === line.text;
    if (line.kind === "damaged") {
      counts.damaged++;
      problems.push({ line: line.line, code: line.code, reason: line.reason });
      // the same torn text the store holds: that entry (carried above) stands for it
      if (again) continue;
      const d = damagedDraft(format, line);
      add([d], d[FOREIGN_FIELD] as ForeignField, previous(), lastTimestamp);
      continue;
    }
    const { value } = line;
    if (mapper.recognizes(value)) recognized++;
    const ts = timestampOf(value);
    if (ts !== null) {
      lastTimestamp = ts;
      firstTimestamp ??= ts;
    }
    const placement = mapper.placement(value);
    const mapped = mapper.map(value);
    counts[mapped.outcome]++;
    if (mapped.problem) problems.push({ line: line.line, ...mapped.problem });
    const parent = placement === "root" ? null : placement === "previous" ? previous() : placement.under;
    const last = add(mapped.drafts, { format, line: line.line, record: value }, parent, lastTimestamp);
    mapper.placed(value, last);
  }

  const sourceId = mapper.sourceId();
  const id = derivedSessionId(format, sourceId ?? options.fallbackKey);
  const ids = new EntryIds(id);
  const entryIds = drafts.map((d) => {
    const next = ids.next();
    if (d.fixed === undefined) return next;
    ids.take(d.fixed.id);
    return d.fixed.id;
  });
  const start = firstTimestamp ?? EPOCH;
  const entries: SessionEntry[] = drafts.map((d, i) => {
    if (d.fixed !== undefined) return d.fixed;
    const entry: SessionEntry = {
      ...d.fields,
      id: entryIds[i]!,
      parentId: d.parent === null ? null : entryIds[d.parent]!,
      timestamp: d.timestamp ?? start,
    };
    // a Codex compaction keeps nothing before it (pi's retain-none form names itself)
    if (entry.type === "compaction" && entry.firstKeptEntryId === "") entry.firstKeptEntryId = entry.id;
    return entry;
  });
  const header: SessionHeader = {
    type: "session",
    version: CURRENT_VERSION,
    id,
    timestamp: start,
    cwd: mapper.cwd() ?? options.fallbackCwd ?? "/",
    [FOREIGN_FIELD]: { format, sessionId: sourceId ?? options.fallbackKey },
  };
  const records = counts.records - counts.damaged;
  return { header, entries, counts, problems, sourceId, unrecognized: records > 0 && recognized === 0 };
}

function timestampOf(value: unknown): string | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const t = (value as Record<string, unknown>).timestamp;
  return typeof t === "string" && !Number.isNaN(Date.parse(t)) ? new Date(Date.parse(t)).toISOString() : null;
}

/** The torn-line entries of a stored imported session, by source line (for `storedTorn`). */
export function staleTornEntries(entries: readonly SessionEntry[]): Map<number, SessionEntry[]> {
  const out = new Map<number, SessionEntry[]>();
  for (const e of entries) {
    const f = foreignOf(e);
    if (f?.damaged?.code !== "TORN_LINE") continue;
    const list = out.get(f.line) ?? [];
    list.push(e);
    out.set(f.line, list);
  }
  return out;
}
