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
 * v1 → v2: every entry gets an `id` and a `parentId` chaining it to the previous entry in file
 * order; a compaction's `firstKeptEntryIndex` (counting the header as 0) becomes
 * `firstKeptEntryId`. Ids derive from the session id and position, so two loads of one v1 file
 * agree. Returns new records; the input is not mutated. Records that already carry an id keep it.
 */
export function migrateV1ToV2(header: SessionHeader, records: readonly PositionedRecord[]): PositionedRecord[] {
  const taken = new Set<string>();
  for (const { record } of records) if (typeof record.id === "string") taken.add(record.id);
  const idByIndex = new Map<number, string>();
  const out: PositionedRecord[] = [];
  let previous: string | null = null;
  for (const { record, lineIndex } of records) {
    const id = typeof record.id === "string" ? record.id : deriveId(header.id, lineIndex, taken);
    const parentId = "parentId" in record ? (record.parentId as string | null) : previous;
    const next: RawRecord = { type: record.type, id, parentId, ...record };
    next.id = id;
    next.parentId = parentId;
    idByIndex.set(lineIndex, id);
    out.push({ record: next, lineIndex });
    previous = id;
  }
  const sortedIndexes = [...idByIndex.keys()];
  for (const item of out) {
    const record = item.record;
    if (record.type !== "compaction" || typeof record.firstKeptEntryIndex !== "number") continue;
    const target = record.firstKeptEntryIndex;
    // A kept index that points at the header or a lost line moves to the next entry that exists.
    const index = sortedIndexes.find((i) => i >= target && i >= 1);
    const { firstKeptEntryIndex: _dropped, ...rest } = record;
    item.record = { ...rest, firstKeptEntryId: index === undefined ? (record.id as string) : idByIndex.get(index)! };
  }
  return out;
}
