/**
 * The one walk over a JSON value that every prepare stage (and the image-payload visitor) is built
 * on. A stage says, per value, what to do with it; the walk does the copying: it returns the same
 * object when nothing changed (structural sharing), copies only the objects and arrays on the
 * path to a change, and never mutates its input. An own `__proto__` key (JSON.parse makes one) is
 * copied and written as data. The walk goes at most `MAX_WALK_DEPTH` levels down: a value nested
 * deeper is refused (`PERSISTENCE_FAILED`) before the recursion could overflow the stack.
 */

import { TranscriptStoreError } from "../errors.ts";
import { MAX_WALK_DEPTH } from "../format/json-depth.ts";

/** Where an object sits: its parent object and the key it has there (null inside arrays / at the top). */
export interface SlotContext {
  parent: Record<string, unknown> | null;
  key: string | null;
}

export const TOP: SlotContext = { parent: null, key: null };

/** Visitor result: keep the value, walking into it when it is an array or an object. */
export const DESCEND: unique symbol = Symbol("descend");
/** Visitor result: delete the key holding the value (object keys only). */
export const REMOVE: unique symbol = Symbol("remove");

export interface TreeMapper {
  /**
   * What to do with `value`, found at `parent[key]` (`parent` and `key` are null for the root and
   * for array items; `where` is where `parent` itself sits): `DESCEND`, `REMOVE`, or a replacement
   * (used as it is, not walked; returning `value` itself keeps it without walking into it).
   */
  visit(value: unknown, key: string | null, parent: Record<string, unknown> | null, where: SlotContext): unknown;
  /** Called with an object and the copy that replaces it (children already changed): last fixes. */
  changed?(original: Record<string, unknown>, copy: Record<string, unknown>): void;
}

/** Maps `value` through `mapper` (see `TreeMapper`); the same object back when nothing changed. */
export function mapTree<T>(value: T, mapper: TreeMapper): T {
  return slot(value, null, null, TOP, mapper, 1) as T;
}

function slot(
  value: unknown,
  key: string | null,
  parent: Record<string, unknown> | null,
  where: SlotContext,
  mapper: TreeMapper,
  depth: number,
): unknown {
  const action = mapper.visit(value, key, parent, where);
  if (action !== DESCEND) return action;
  if (typeof value !== "object" || value === null) return value;
  if (depth > MAX_WALK_DEPTH) {
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `a value nested deeper than ${MAX_WALK_DEPTH} levels is not walked`);
  }
  if (Array.isArray(value)) return mapArray(value, mapper, depth);
  return mapObject(value as Record<string, unknown>, parent === null ? TOP : { parent, key }, mapper, depth);
}

function mapArray(value: unknown[], mapper: TreeMapper, depth: number): unknown[] {
  let out: unknown[] | null = null;
  for (let i = 0; i < value.length; i++) {
    const item = value[i];
    const next = slot(item, null, null, TOP, mapper, depth + 1);
    if (next === item) continue;
    if (next === REMOVE) throw new TypeError("REMOVE deletes object keys, not array items");
    out ??= value.slice();
    out[i] = next;
  }
  return out ?? value;
}

function mapObject(value: Record<string, unknown>, at: SlotContext, mapper: TreeMapper, depth: number): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const key in value) {
    const child = value[key];
    const next = slot(child, key, value, at, mapper, depth + 1);
    if (next === child) continue;
    // A spread copies an own "__proto__" key as data, and assigning it then writes that data key.
    out ??= { ...value };
    if (next === REMOVE) delete out[key];
    else out[key] = next;
  }
  if (out !== null) mapper.changed?.(value, out);
  return out ?? value;
}
