import { looksLikeBlobRef } from "../blob/blob-ref.ts";
import { payloadKindAt } from "./image-shapes.ts";
import { isPromptStateSlot } from "./prompt-state.ts";

/** Which built-in stages can change an entry, found by one structural walk (see `scanStages`). */
export interface StageScan {
  strip: boolean;
  images: boolean;
  cut: boolean;
  /** An image payload is already a blob ref (a lazy session's entry): the line will name a blob. */
  refs: boolean;
}

/**
 * Walks an entry once, the way `mapTree` does (`for…in` over objects, arrays by index), and
 * reports which built-in stages would change it: a transient key anywhere (strip); an image
 * payload (`payloadKindAt`) that is not a ref and, when base64, at least `blobThreshold` long
 * (externalize: it moves it or warns about it); a string longer than `maxChars` that is no payload
 * (truncate); persisted prompt state (a system message, `isPromptStateSlot`) is not walked. A
 * stage reported false returns its input unchanged, so skipping it writes the very
 * same bytes. Once a transient key is seen every stage is reported, since removing keys can change
 * what the later stages see. Cost grows with the number of nodes, not with the length of strings:
 * a 300 KB payload is not read. Recursion is as deep as the entry (a RangeError past the stack),
 * unless `maxDepth` is given: an object or array nested deeper (the entry itself is level 1; a
 * cycle is infinitely deep) then throws `TooDeep` as soon as it is reached.
 */
export function scanStages(
  entry: unknown,
  keys: ReadonlySet<string>,
  maxChars: number,
  blobThreshold: number,
  maxDepth = Number.POSITIVE_INFINITY,
): StageScan {
  const found: StageScan = { strip: false, images: false, cut: false, refs: false };
  if (typeof entry === "string") found.cut = entry.length > maxChars;
  else if (typeof entry === "object" && entry !== null) scanNode(entry, null, null, found, { keys, maxChars, blobThreshold, maxDepth }, 1);
  return found;
}

/** Thrown by `scanStages` for a value nested deeper than its `maxDepth`. */
export class TooDeep extends Error {}

/** Scans `node`, which sits at `parent[key]` (both null for the root and for array items) at `depth`. */
function scanNode(
  node: object,
  parent: Record<string, unknown> | null,
  key: string | null,
  found: StageScan,
  limits: ScanLimits,
  depth: number,
): void {
  const { keys, maxChars } = limits;
  if (depth > limits.maxDepth) throw new TooDeep(`nested deeper than ${limits.maxDepth} levels (or circular)`);
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const item: unknown = node[i];
      if (typeof item === "string") {
        if (item.length > maxChars) found.cut = true;
      } else if (typeof item === "object" && item !== null) {
        scanNode(item, null, null, found, limits, depth + 1);
        if (found.strip) return;
      }
    }
    return;
  }
  const obj = node as Record<string, unknown>;
  for (const k in obj) {
    if (keys.has(k)) {
      found.strip = found.images = found.cut = found.refs = true;
      return;
    }
    const child = obj[k];
    if (typeof child === "string") {
      // Only these keys can hold a payload (`payloadKindAt`); the check itself is made only for them.
      const kind =
        k === "data" || k === "image_url" || k === "url" ? payloadKindAt(obj, k, parent === null ? TOP_SLOT : { parent, key }) : null;
      // A payload is never cut; it is externalized unless it is a ref or a short base64 one.
      if (kind === null) {
        if (child.length > maxChars) found.cut = true;
      } else if (looksLikeBlobRef(child)) found.refs = true;
      else if (kind === "dataUrl" || child.length >= limits.blobThreshold) found.images = true;
    } else if (typeof child === "object" && child !== null) {
      // Persisted prompt state is written as it is (see prompt-state.ts): nothing in it counts.
      if (isPromptStateSlot(child, k, parent === null)) continue;
      scanNode(child, obj, k, found, limits, depth + 1);
      if (found.strip) return;
    }
  }
}

const TOP_SLOT = { parent: null, key: null };

interface ScanLimits {
  keys: ReadonlySet<string>;
  maxChars: number;
  blobThreshold: number;
  maxDepth: number;
}
