import { describe, expect, it } from "vitest";
import { preview } from "../../src/session/session-info.ts";

/** The definition the one-pass `preview` must match exactly. */
const reference = (text: string) => text.slice(0, 400).replace(/\s+/g, " ").trim().slice(0, 200);

describe("preview (listing's first-message text)", () => {
  it("equals collapse-trim-cut of the first 400 units for every UTF-16 code unit as a separator", () => {
    for (let c = 0; c < 0x10000; c++) {
      const text = ` a${String.fromCharCode(c)}${String.fromCharCode(c)}b `;
      expect(preview(text), `U+${c.toString(16)}`).toBe(reference(text));
    }
  });

  it("equals the reference on seeded random texts around the 200 and 400 unit cuts", () => {
    const parts = ["a", "bc", "é", "\ud83d\ude00", "word ", " ", "\t", "\n", "\u00a0", "\u2028", "\u3000", "\ufeff", "\u200b", "\u0085"];
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    for (let n = 0; n < 20_000; n++) {
      const length = Math.floor(random() * 520);
      let text = "";
      while (text.length < length) text += parts[Math.floor(random() * parts.length)];
      expect(preview(text)).toBe(reference(text));
    }
  });
});
