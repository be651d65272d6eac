import { describe, expect, it } from "vitest";
import { newEntryId } from "../../src/session/ids.ts";

describe("newEntryId", () => {
  it("gives 8 lowercase hex digits (leading zeros kept), never one already taken", () => {
    const taken = new Set<string>();
    let refused = 0;
    const guard = { has: (id: string) => taken.has(id) || (refused < 50 && ++refused > 0) };
    for (let i = 0; i < 5000; i++) {
      const id = newEntryId(guard);
      expect(id).toMatch(/^[0-9a-f]{8}$/);
      expect(taken.has(id)).toBe(false);
      taken.add(id);
    }
    expect(refused).toBe(50);
    // The first hex digit is spread over all 16 values (no lost leading zeros).
    expect(new Set([...taken].map((id) => id[0])).size).toBe(16);
  });
});
