import { DESCEND, mapTree, REMOVE } from "./map-tree.ts";
import { isPromptStateSlot } from "./prompt-state.ts";

/** Keys holding streaming state that must never reach disk. @default ["partialJson", "jsonlEvents"] */
export const DEFAULT_TRANSIENT_KEYS: readonly string[] = ["partialJson", "jsonlEvents"];

/**
 * Removes the transient keys at any depth, except inside persisted prompt state (a system message:
 * `isPromptStateSlot`). Returns the same object when none is present, and never mutates its input.
 */
export function stripTransientFields<T>(value: T, keys: ReadonlySet<string>): T {
  return mapTree(value, {
    visit: (child, key, parent, where) => {
      if (key !== null && keys.has(key)) return REMOVE;
      return isPromptStateSlot(child, key, parent !== null && where.parent === null) ? child : DESCEND;
    },
  });
}

/** `"key":` strings whose absence from a serialized line proves none of `keys` is in it. */
export function transientMarkers(keys: readonly string[]): string[] {
  return keys.map((k) => `${JSON.stringify(k)}:`);
}

/** False when the serialized line proves there is nothing to strip (no marker in it). */
export function stripNeeded(line: string, markers: readonly string[]): boolean {
  return markers.some((m) => line.includes(m));
}
