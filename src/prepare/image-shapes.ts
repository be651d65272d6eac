import { DESCEND, mapTree, type SlotContext } from "./map-tree.ts";

export type { SlotContext } from "./map-tree.ts";

/**
 * How an image payload string maps to blob bytes: `base64` payloads store their decoded bytes,
 * `dataUrl` payloads (provider `image_url`) store the URL's UTF-8 bytes.
 */
export type PayloadKind = "base64" | "dataUrl";

/** Returns the replacement payload, or the same string to leave it. */
export type PayloadVisitor = (payload: string, kind: PayloadKind) => string;

function isUrlPayload(value: string): boolean {
  return value.startsWith("data:image/") || value.startsWith("blob:");
}

/**
 * The kind of image payload `obj[key]` is, or null when it is none, for the shapes of docs/format.md (Blob refs):
 * `{type:"image", data}` and `{data, mimeType:"image/…"}` blocks, `image_url` data URLs (a string,
 * or `url` in an `image_url` object), and Anthropic `{type:"image", source:{type:"base64", data}}`.
 * `at` says where `obj` itself sits. The one definition every stage that must treat payloads
 * specially (externalize, rehydrate, truncate) shares.
 */
export function payloadKindAt(obj: Record<string, unknown>, key: string, at: SlotContext): PayloadKind | null {
  const value = obj[key];
  if (typeof value !== "string") return null;
  if (key === "data") {
    if (obj.type === "image" || (typeof obj.mimeType === "string" && obj.mimeType.startsWith("image/"))) return "base64";
    if (at.key === "source" && at.parent?.type === "image" && obj.type === "base64") return "base64";
    return null;
  }
  if (key === "image_url") return isUrlPayload(value) ? "dataUrl" : null;
  if (key === "url" && at.key === "image_url") return isUrlPayload(value) ? "dataUrl" : null;
  return null;
}

/**
 * Visits every image payload (see `payloadKindAt`) in a JSON value. Returns the same object when
 * the visitor changes nothing (structural sharing); never mutates its input.
 */
export function mapImagePayloads<T>(value: T, visit: PayloadVisitor): T {
  return mapTree(value, {
    visit: (child, key, parent, where) => {
      const kind = parent === null ? null : payloadKindAt(parent, key!, where);
      return kind === null ? DESCEND : visit(child as string, kind);
    },
  });
}
