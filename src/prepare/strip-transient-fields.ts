/** Keys holding streaming state that must never reach disk. @default ["partialJson", "jsonlEvents"] */
export const DEFAULT_TRANSIENT_KEYS: readonly string[] = ["partialJson", "jsonlEvents"];

/**
 * Removes the transient keys at any depth. Returns the same object when none is present, and
 * never mutates its input.
 */
export function stripTransientFields<T>(value: T, keys: ReadonlySet<string>): T {
  return strip(value, keys) as T;
}

function strip(value: unknown, keys: ReadonlySet<string>): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const next = strip(value[i], keys);
      if (next !== value[i]) {
        out ??= value.slice();
        out[i] = next;
      }
    }
    return out ?? value;
  }
  const obj = value as Record<string, unknown>;
  let out: Record<string, unknown> | null = null;
  for (const key in obj) {
    if (keys.has(key)) {
      out ??= { ...obj };
      delete out[key];
      continue;
    }
    const next = strip(obj[key], keys);
    if (next !== obj[key]) {
      out ??= { ...obj };
      out[key] = next;
    }
  }
  return out ?? obj;
}
