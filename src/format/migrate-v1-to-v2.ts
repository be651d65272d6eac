import { createHash } from "node:crypto";
import type { PositionedRecord } from "./session-parser.ts";
import type { RawRecord, SessionHeader } from "./types.ts";

/** A deterministic 8-hex entry id from the session id and the entry's position. */
function deriveId(sessionId: string, lineIndex: number, taken: Set<string>): string {
  for (let attempt = 0; ; attempt++) {
    const seed = attempt === 0 ? `${sessionId}:${lineIndex}` : `${sessionId}:${lineIndex}:${attempt}`;
    const id = createHash("sha256").update(seed).digest("hex").slice(0, 8);
    if (!taken.has(id)) {
      taken.add(id);
      return id;
    }
  }
}

/**
 * The v1 → v2 rules applied one record at a time, in file order: each record gets its derived id
 * and the previous record as parent. Used whole by `migrateV1ToV2` and streaming by `migrateFile`.
 */
export class V1ToV2Chain {
  private readonly idByIndex = new Map<number, string>();
  private previous: string | null = null;

  /** `taken`: ids already present in the file (they are kept and never derived again). */
  constructor(
    private readonly sessionId: string,
    private readonly taken: Set<string>,
  ) {}

  /** The record with its `id` and `parentId`; `firstKeptEntryIndex` is left for `keptId`. */
  assign(record: RawRecord, lineIndex: number): RawRecord {
    const id = typeof record.id === "string" ? record.id : deriveId(this.sessionId, lineIndex, this.taken);
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
 * agree. Returns new records; the input is not mutated. Records that already carry an id keep it.
 */
export function migrateV1ToV2(header: SessionHeader, records: readonly PositionedRecord[]): PositionedRecord[] {
  const taken = new Set<string>();
  for (const { record } of records) if (typeof record.id === "string") taken.add(record.id);
  const chain = new V1ToV2Chain(header.id, taken);
  const out = records.map(({ record, lineIndex }) => ({ record: chain.assign(record, lineIndex), lineIndex }));
  for (const item of out) {
    if (hasKeptIndex(item.record)) item.record = withKeptId(item.record, chain.keptId(item.record.firstKeptEntryIndex) ?? (item.record.id as string));
  }
  return out;
}
