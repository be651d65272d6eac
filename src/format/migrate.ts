import { migrateV1ToV2 } from "./migrate-v1-to-v2.ts";
import { migrateV2ToV3 } from "./migrate-v2-to-v3.ts";
import type { PositionedRecord } from "./session-parser.ts";
import { CURRENT_VERSION, type SessionEntry, type SessionHeader } from "./types.ts";
import { makeIdsUnique } from "./unique-ids.ts";

export interface MigrationResult {
  header: SessionHeader;
  entries: SessionEntry[];
  /** The version the input had, or null when it was already current. */
  migratedFrom: number | null;
}

/** The version a header declares; a missing version means 1. */
export function headerVersion(header: SessionHeader): number {
  return typeof header.version === "number" ? header.version : 1;
}

/**
 * Brings a parsed session to the current version: pure, deterministic and idempotent (migrating a
 * current session returns its records untouched). Legacy entries come out with unique ids; a current
 * file's repeated ids are reported by the parser instead (it is never rewritten on load).
 */
export function migrateSession(header: SessionHeader, records: readonly PositionedRecord[]): MigrationResult {
  const from = headerVersion(header);
  let items: readonly PositionedRecord[] = records;
  if (from < 2) items = migrateV1ToV2(header, items);
  else if (from === 2) items = makeIdsUnique(header.id, items);
  if (from < 3) items = migrateV2ToV3(items);
  const entries = items.map((item) => item.record as SessionEntry);
  if (from >= CURRENT_VERSION) return { header, entries, migratedFrom: null };
  const { type, version: _old, ...rest } = header;
  return { header: { type, version: CURRENT_VERSION, ...rest } as SessionHeader, entries, migratedFrom: from };
}
