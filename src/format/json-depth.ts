/**
 * Deepest nesting of objects and arrays in an entry this library serializes (the entry itself is
 * level 1). Deeper entries are refused (`PERSISTENCE_FAILED`) before anything is written: below it,
 * every walk of an entry (JSON.stringify with or without a replacer, rehydration, export, fork)
 * fits in the stack wherever it runs, so whatever is acknowledged can be read back and exported.
 * Lines re-written from their own text (migrate) are not held to it.
 */
export const MAX_ENTRY_DEPTH = 1000;

/**
 * Deepest nesting of objects and arrays any recursive walk of this library is given (the value
 * itself is level 1). Checked without recursion (`jsonDepthExceeds`) on every path that reads
 * another program's JSON before anything walks it; `mapTree` refuses to go deeper (coded) rather
 * than overflow the stack.
 */
export const MAX_WALK_DEPTH = 2 * MAX_ENTRY_DEPTH;

/**
 * True when `value` holds an object or array nested deeper than `max` levels (the value itself is
 * level 1). Iterative: safe on any value `JSON.parse` returned, however deep.
 */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > max) return true;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}
