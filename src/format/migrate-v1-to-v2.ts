import type { PositionedRecord } from "./session-parser.ts";
import type { RawRecord, SessionHeader } from "./types.ts";
import { IdAssigner, idsOf } from "./unique-ids.ts";

/**
 * The v1 → v2 rules applied one record at a time, in file order: each record gets its derived id
 * and the previous record as parent. Used whole by `migrateV1ToV2` and streaming by `migrateFile`.
 */
export class V1ToV2Chain {
  private readonly idByIndex = new Map<number, string>();
  private previous: string | null = null;
  private readonly ids: IdAssigner;

  /** `taken`: ids already present in the file (kept, unless an earlier record has the same one). */
  constructor(sessionId: string, taken: Set<string>) {
    this.ids = new IdAssigner(sessionId, taken);
  }

  /** The record with its `id` and `parentId`; `firstKeptEntryIndex` is left for `keptId`. */
  assign(record: RawRecord, lineIndex: number): RawRecord {
    const id = this.ids.assign(record.id, lineIndex);
    const parentId = "parentId" in record ? (record.parentId as string | null) : this.previous;
    const next: RawRecord = { type: record.type, id, parentId, ...record };
    next.id = id;
    next.parentId = parentId;
    this.idByIndex.set(lineIndex, id);
    this.previous = id;
    return next;
  }

  /**
   * The id a `firstKeptEntryIndex` names, among the records assigned so far: that index, or when
   * it names the header or a lost line, the next record that exists. Undefined when no assigned
   * record is at or after it.
   */
  keptId(target: number): string | undefined {
    for (const [index, id] of this.idByIndex) if (index >= target && index >= 1) return id;
    return undefined;
  }
}

/** Replaces a compaction's `firstKeptEntryIndex` with `firstKeptEntryId`. */
export function withKeptId(record: RawRecord, keptId: string): RawRecord {
  const { firstKeptEntryIndex: _dropped, ...rest } = record;
  return { ...rest, firstKeptEntryId: keptId };
}

/** True for a v1 compaction that still names its kept entry by index. */
export function hasKeptIndex(record: RawRecord): record is RawRecord & { firstKeptEntryIndex: number } {
  return record.type === "compaction" && typeof record.firstKeptEntryIndex === "number";
}

/**
 * v1 → v2: every entry gets an `id` and a `parentId` chaining it to the previous entry in file
 * order; a compaction's `firstKeptEntryIndex` (counting the header as 0) becomes
 * `firstKeptEntryId`. Ids derive from the session id and position, so two loads of one v1 file
 * agree. Returns new records; the input is not mutated. A record that already carries an id keeps it
 * unless an earlier record has the same one: then it gets a derived id, so no entry hides another.
 */
export function migrateV1ToV2(header: SessionHeader, records: readonly PositionedRecord[]): PositionedRecord[] {
  const chain = new V1ToV2Chain(header.id, idsOf(records));
  const out = records.map(({ record, lineIndex }) => ({ record: chain.assign(record, lineIndex), lineIndex }));
  for (const item of out) {
    if (hasKeptIndex(item.record))
      item.record = withKeptId(item.record, chain.keptId(item.record.firstKeptEntryIndex) ?? (item.record.id as string));
  }
  return out;
}
