import { createHash } from "node:crypto";
import type { PositionedRecord } from "./session-parser.ts";

/** A deterministic 8-hex entry id from the session id and the entry's position, avoiding `taken`. */
export function deriveId(sessionId: string, lineIndex: number, taken: Set<string>): string {
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
 * Hands out the ids of a session in file order so that no two entries share one: an entry keeps
 * its own id unless an earlier entry already has it (or it has none); then it gets a derived id
 * (`deriveId`) that no entry of the file uses. Deterministic: the same file gives the same ids.
 */
export class IdAssigner {
  private readonly used = new Set<string>();

  /** `taken`: every id present in the file (derived ids never collide with one). Mutated. */
  constructor(
    private readonly sessionId: string,
    private readonly taken: Set<string>,
  ) {}

  /** The id the entry at `lineIndex` gets, given the id it carries. */
  assign(own: unknown, lineIndex: number): string {
    let id: string;
    if (typeof own === "string" && own.length > 0 && !this.used.has(own)) {
      id = own;
      this.taken.add(id);
    } else {
      id = deriveId(this.sessionId, lineIndex, this.taken);
    }
    this.used.add(id);
    return id;
  }
}

/** Every non-empty string id the records carry. */
export function idsOf(records: readonly PositionedRecord[]): Set<string> {
  const ids = new Set<string>();
  for (const { record } of records) if (typeof record.id === "string" && record.id.length > 0) ids.add(record.id);
  return ids;
}

/**
 * Gives every entry after the first that carries an already used id a derived one (v2 files written
 * by older tools can repeat an id, which would hide an entry). Parent links are left as they are:
 * they keep naming the first entry with that id. Pure; same array back when nothing repeats.
 */
export function makeIdsUnique(sessionId: string, records: readonly PositionedRecord[]): readonly PositionedRecord[] {
  const assigner = new IdAssigner(sessionId, idsOf(records));
  let out: PositionedRecord[] | null = null;
  records.forEach((item, i) => {
    const id = assigner.assign(item.record.id, item.lineIndex);
    if (id === item.record.id) return;
    out ??= records.slice();
    out[i] = { record: { ...item.record, id }, lineIndex: item.lineIndex };
  });
  return out ?? records;
}
