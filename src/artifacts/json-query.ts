import { TranscriptStoreError } from "../errors.ts";

/** One step into a JSON value: an object key or an array index. */
export type JsonStep = string | number;

/**
 * Parses the `?q=` query of an `agent://` URL: a jq-style path such as `.items[0].name`,
 * `items.0.name`, `["a key"]['other']` or `.` (the whole value). Anything else is
 * `INVALID_QUERY`; nothing is evaluated, so a query can only navigate, never execute.
 */
export function parseJsonQuery(query: string): JsonStep[] {
  const steps: JsonStep[] = [];
  let i = 0;
  const fail = (why: string): never => {
    throw new TranscriptStoreError("INVALID_QUERY", `Invalid query ${JSON.stringify(query)} at ${i}: ${why}`);
  };
  const q = query.trim();
  if (q.length === 0) fail("empty query");
  if (q === ".") return steps;
  while (i < q.length) {
    const ch = q[i]!;
    if (ch === "[") {
      const close = findBracketEnd(q, i, fail);
      const inner = q.slice(i + 1, close).trim();
      if (/^\d+$/.test(inner)) steps.push(Number(inner));
      else if (inner.startsWith('"')) steps.push(parseDoubleQuoted(inner, fail));
      else if (inner.startsWith("'") && inner.endsWith("'") && inner.length >= 2) steps.push(inner.slice(1, -1));
      else fail("expected an index or a quoted key inside []");
      i = close + 1;
      continue;
    }
    if (ch === ".") {
      i++;
      if (i >= q.length) fail("path ends with '.'");
      if (q[i] === "[") continue;
    } else if (i > 0) fail("expected '.' or '['");
    let end = i;
    while (end < q.length && q[end] !== "." && q[end] !== "[") end++;
    const key = q.slice(i, end);
    if (key.length === 0) fail("empty key");
    steps.push(/^\d+$/.test(key) ? Number(key) : key);
    i = end;
  }
  return steps;
}

function findBracketEnd(q: string, open: number, fail: (why: string) => never): number {
  let quote: string | null = null;
  for (let j = open + 1; j < q.length; j++) {
    const c = q[j]!;
    if (quote !== null) {
      if (c === "\\") j++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "]") return j;
  }
  return fail("unclosed '['");
}

function parseDoubleQuoted(inner: string, fail: (why: string) => never): string {
  try {
    const key: unknown = JSON.parse(inner);
    if (typeof key === "string") return key;
  } catch {
    // fall through to the error below
  }
  return fail("bad quoted key");
}

/**
 * Walks `steps` into `value`. A missing key or index gives `null` (as jq does); stepping into a
 * string, number or null is `INVALID_QUERY`. Only own properties are visible, so `__proto__`
 * or `constructor` never reach the prototype.
 */
export function extractJson(value: unknown, steps: readonly JsonStep[], describe: string): unknown {
  let current = value;
  for (const step of steps) {
    if (Array.isArray(current)) {
      const index = typeof step === "number" ? step : /^\d+$/.test(step) ? Number(step) : Number.NaN;
      if (Number.isNaN(index))
        throw new TranscriptStoreError("INVALID_QUERY", `Cannot index an array with ${JSON.stringify(step)} in ${describe}`);
      current = index < current.length ? current[index] : null;
    } else if (current !== null && typeof current === "object") {
      const key = String(step);
      current = Object.hasOwn(current, key) ? (current as Record<string, unknown>)[key] : null;
    } else {
      throw new TranscriptStoreError(
        "INVALID_QUERY",
        `Cannot index ${current === null ? "null" : typeof current} with ${JSON.stringify(step)} in ${describe}`,
      );
    }
  }
  return current;
}
