import type { PositionedRecord } from "./session-parser.ts";
import { isRecord } from "./types.ts";

/** v2 → v3: message role `hookMessage` becomes `custom`. Unchanged records keep their identity. */
export function migrateV2ToV3(records: readonly PositionedRecord[]): PositionedRecord[] {
  return records.map((item) => {
    const message = item.record.message;
    if (item.record.type !== "message" || !isRecord(message) || message.role !== "hookMessage") return item;
    return { record: { ...item.record, message: { ...message, role: "custom" } }, lineIndex: item.lineIndex };
  });
}
