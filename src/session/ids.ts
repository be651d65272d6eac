import { randomBytes, randomFillSync } from "node:crypto";

/** A UUIDv7: 48-bit millisecond time, version 7, variant 10, random rest. Sorts by creation. */
export function uuidv7(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  let t = now;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Two lowercase hex digits per byte value. */
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** Random words drawn in blocks: one `randomFillSync` serves 1,024 entry ids on the append path. */
const pool = new Uint32Array(1024);
let poolOffset = pool.length;

/** A fresh 8-lowercase-hex entry id not in `taken`. */
export function newEntryId(taken: { has(id: string): boolean }): string {
  for (;;) {
    if (poolOffset === pool.length) {
      randomFillSync(pool);
      poolOffset = 0;
    }
    const w = pool[poolOffset++]!;
    const id = HEX[w >>> 24]! + HEX[(w >>> 16) & 0xff]! + HEX[(w >>> 8) & 0xff]! + HEX[w & 0xff]!;
    if (!taken.has(id)) return id;
  }
}
