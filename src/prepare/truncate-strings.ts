import { payloadKindAt } from "./image-shapes.ts";
import { DESCEND, mapTree } from "./map-tree.ts";
import { isPromptStateSlot } from "./prompt-state.ts";

/** Longest string persisted, in UTF-16 units, suffix included. @default 500000 */
export const DEFAULT_MAX_STRING_CHARS = 500_000;

/** Appended to every cut string. */
export const TRUNCATION_SUFFIX = "\n\n[Session persistence truncated large content]";

/** Opaque values that must never be cut: when too long they are cleared to "". */
export const SIGNATURE_KEYS: ReadonlySet<string> = new Set([
  "thinkingSignature",
  "thoughtSignature",
  "textSignature",
  "signature",
  "encrypted_content",
]);

/** Cuts `text` to at most `max` units including the suffix, never splitting a surrogate pair. */
export function truncateString(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = Math.max(0, max - TRUNCATION_SUFFIX.length);
  const last = text.charCodeAt(cut - 1);
  if (cut > 0 && last >= 0xd800 && last <= 0xdbff) cut--;
  return text.slice(0, cut) + TRUNCATION_SUFFIX;
}

function countLines(text: string): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * Cuts every string longer than `max`, except image payloads (`payloadKindAt`) and persisted
 * prompt state (a system message: `isPromptStateSlot`, kept whole); clears signature
 * keys instead of cutting them; recomputes a sibling numeric `lineCount` when its `content` string
 * was cut. Same object back when nothing is too long; the input is never mutated.
 */
export function truncateStrings<T>(value: T, max: number): T {
  return mapTree(value, {
    visit: (child, key, parent, where) => {
      if (typeof child !== "string") return isPromptStateSlot(child, key, parent !== null && where.parent === null) ? child : DESCEND;
      if (child.length <= max) return child;
      if (parent !== null) {
        // An image payload is never cut: a cut image is a destroyed image (kept whole when inline).
        if (payloadKindAt(parent, key!, where) !== null) return child;
        if (SIGNATURE_KEYS.has(key!)) return "";
      }
      return truncateString(child, max);
    },
    changed: (obj, out) => {
      if (typeof obj.lineCount === "number" && typeof obj.content === "string" && out.content !== obj.content) {
        out.lineCount = countLines(out.content as string);
      }
    },
  });
}

/** False when the serialized line proves no string in it is longer than `max`. */
export function truncateNeeded(line: string, max: number): boolean {
  return line.length > max;
}
