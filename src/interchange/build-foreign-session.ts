import { CURRENT_VERSION, type SessionEntry, type SessionHeader } from "../format/types.ts";
import { cwdOrPlaceholder } from "../session/recorded-cwd.ts";
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

/** What a first pass over a source file learns: its header, how every line was accounted for. */
export interface ForeignScan {
  header: SessionHeader;
  /** Entries the session gets (before any stored torn line is carried again). */
  entries: number;
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
  /** The session id (from a scan); absent: a provisional one (a scan needs none). */
  sessionId?: string;
  /** The header's timestamp (from a scan): entries before any timestamp get it. */
  start?: string;
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

/** What a pass tallies while it yields entries. */
interface Tally {
  counts: ForeignCounts;
  problems: ForeignProblem[];
  recognized: number;
  firstTimestamp: string | null;
  entries: number;
}

/**
 * The entries of a foreign transcript, one at a time as its lines arrive (nothing but the entry ids
 * is held): each line's first entry carries it whole under `foreign` (docs/interchange.md); a
 * damaged line becomes a `custom` entry with its exact text. Ids are derived from the session id,
 * so the same source gives the same session, entry for entry. `tally` is filled as it goes.
 */
async function* foreignEntries(
  lines: AsyncIterable<ForeignLine>,
  mapper: ForeignMapper,
  options: BuildForeignOptions,
  tally: Tally,
): AsyncGenerator<SessionEntry> {
  const format: InterchangeFormat = mapper.format;
  const ids = new EntryIds(options.sessionId ?? "scan");
  const idOf: string[] = [];
  const { counts, problems } = tally;
  let lastTimestamp: string | null = null;

  const entryOf = (d: Draft): SessionEntry => {
    const next = ids.next();
    if (d.fixed !== undefined) {
      ids.take(d.fixed.id);
      idOf.push(d.fixed.id);
      return d.fixed;
    }
    const entry: SessionEntry = {
      ...d.fields,
      id: next,
      parentId: d.parent === null ? null : idOf[d.parent]!,
      timestamp: d.timestamp ?? options.start ?? EPOCH,
    };
    idOf.push(next);
    // a Codex compaction keeps nothing before it (pi's retain-none form names itself)
    if (entry.type === "compaction" && entry.firstKeptEntryId === "") entry.firstKeptEntryId = entry.id;
    tally.entries++;
    return entry;
  };
  const made = (fields: EntryDraft[], first: ForeignField, parent: number | null, timestamp: string | null): SessionEntry[] =>
    fields.map((f, i) => {
      const foreign: ForeignField = i === 0 ? first : { format, line: first.line, part: i };
      return entryOf({ fields: { ...f, [FOREIGN_FIELD]: foreign }, parent: i === 0 ? parent : idOf.length - 1, timestamp });
    });
  const previous = () => (idOf.length === 0 ? null : idOf.length - 1);

  for await (const line of lines) {
    counts.records++;
    const stale = options.storedTorn?.get(line.line) ?? [];
    for (const fixed of stale) yield entryOf({ fixed, fields: fixed, parent: null, timestamp: fixed.timestamp });
    const lastStale = stale[stale.length - 1];
    const again = line.kind === "damaged" && lastStale !== undefined && foreignOf(lastStale)?.damaged?.text === line.text;
    if (line.kind === "damaged") {
      counts.damaged++;
      problems.push({ line: line.line, code: line.code, reason: line.reason });
      // the same torn text the store holds: that entry (carried above) stands for it
      if (again) continue;
      const d = damagedDraft(format, line);
      yield* made([d], d[FOREIGN_FIELD] as ForeignField, previous(), lastTimestamp);
      continue;
    }
    const { value } = line;
    if (mapper.recognizes(value)) tally.recognized++;
    const ts = timestampOf(value);
    if (ts !== null) {
      lastTimestamp = ts;
      tally.firstTimestamp ??= ts;
    }
    const placement = mapper.placement(value);
    const mapped = mapper.map(value);
    counts[mapped.outcome]++;
    if (mapped.problem) problems.push({ line: line.line, ...mapped.problem });
    const parent = placement === "root" ? null : placement === "previous" ? previous() : placement.under;
    yield* made(mapped.drafts, { format, line: line.line, record: value }, parent, lastTimestamp);
    mapper.placed(value, idOf.length - 1);
  }
}

function newTally(): Tally {
  return { counts: { records: 0, mapped: 0, kept: 0, damaged: 0 }, problems: [], recognized: 0, firstTimestamp: null, entries: 0 };
}

/** A first pass over a source file: its header (the derived id, the first timestamp, the cwd) and the report's counts. */
export async function scanForeignSession(
  lines: AsyncIterable<ForeignLine>,
  mapper: ForeignMapper,
  options: BuildForeignOptions,
): Promise<ForeignScan> {
  const tally = newTally();
  for await (const _ of foreignEntries(lines, mapper, { ...options, sessionId: undefined, storedTorn: undefined }, tally));
  const format = mapper.format;
  const sourceId = mapper.sourceId();
  const parent = mapper.parent();
  const header: SessionHeader = {
    type: "session",
    version: CURRENT_VERSION,
    id: derivedSessionId(format, sourceId ?? options.fallbackKey),
    timestamp: tally.firstTimestamp ?? EPOCH,
    // none, "" or relative: the placeholder, never this process's cwd
    cwd: cwdOrPlaceholder(mapper.cwd()),
    // a subagent names the session that spawned it by the id that session's import derives (in the store or not yet)
    ...(parent === null ? {} : { parentSession: derivedSessionId(format, parent.sessionId) }),
    [FOREIGN_FIELD]: { format, sessionId: sourceId ?? options.fallbackKey, ...(parent === null ? {} : { parent }) },
  };
  const records = tally.counts.records - tally.counts.damaged;
  return {
    header,
    entries: tally.entries,
    counts: tally.counts,
    problems: tally.problems,
    sourceId,
    unrecognized: records > 0 && tally.recognized === 0,
  };
}

/** The session's entries, one at a time (a second pass, with the scan's header: `sessionId`, `start`). */
export function buildForeignEntries(
  lines: AsyncIterable<ForeignLine>,
  mapper: ForeignMapper,
  header: SessionHeader,
  options: BuildForeignOptions,
): AsyncGenerator<SessionEntry> {
  return foreignEntries(lines, mapper, { ...options, sessionId: header.id, start: header.timestamp }, newTally());
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
