import { isRecord } from "../format/types.ts";

/**
 * How an image payload string maps to blob bytes: `base64` payloads store their decoded bytes,
 * `dataUrl` payloads (provider `image_url`) store the URL's UTF-8 bytes.
 */
export type PayloadKind = "base64" | "dataUrl";

/** Returns the replacement payload, or the same string to leave it. */
export type PayloadVisitor = (payload: string, kind: PayloadKind) => string;

function isDataImageUrl(value: string): boolean {
  return value.startsWith("data:image/");
}

/**
 * Visits every image payload of SPEC §4 in a JSON value: `{type:"image", data}` and
 * `{data, mimeType:"image/…"}` blocks, `image_url` data URLs (string or `{url}`), and
 * Anthropic `{type:"image", source:{type:"base64", data}}` blocks. Returns the same object when the
 * visitor changes nothing (structural sharing); never mutates its input.
 */
export function mapImagePayloads<T>(value: T, visit: PayloadVisitor): T {
  return walk(value, visit) as T;
}

function walk(value: unknown, visit: PayloadVisitor): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const next = typeof item === "object" && item !== null ? walk(item, visit) : item;
      if (next !== item) {
        out ??= value.slice();
        out[i] = next;
      }
    }
    return out ?? value;
  }
  if (!isRecord(value)) return value;

  let out: Record<string, unknown> | null = null;
  const set = (key: string, next: unknown) => {
    out ??= { ...value };
    out[key] = next;
  };

  const isImageBlock = value.type === "image" || (typeof value.mimeType === "string" && value.mimeType.startsWith("image/"));
  let payloadKey: string | null = null;
  if (isImageBlock && typeof value.data === "string") {
    payloadKey = "data";
    const next = visit(value.data, "base64");
    if (next !== value.data) set("data", next);
  }
  for (const key in value) {
    if (key === payloadKey) continue;
    const child = value[key];
    if (key === "image_url") {
      if (typeof child === "string") {
        if (isDataImageUrl(child) || child.startsWith("blob:")) {
          const next = visit(child, "dataUrl");
          if (next !== child) set(key, next);
        }
        continue;
      }
      if (isRecord(child) && typeof child.url === "string" && (isDataImageUrl(child.url) || child.url.startsWith("blob:"))) {
        const url = visit(child.url, "dataUrl");
        const rest = walkExcept(child, "url", visit);
        if (url !== child.url || rest !== child) set(key, { ...rest, url });
        continue;
      }
    }
    if (key === "source" && value.type === "image" && isRecord(child) && child.type === "base64" && typeof child.data === "string") {
      const data = visit(child.data, "base64");
      const rest = walkExcept(child, "data", visit);
      if (data !== child.data || rest !== child) set(key, { ...rest, data });
      continue;
    }
    if (typeof child === "object" && child !== null) {
      const next = walk(child, visit);
      if (next !== child) set(key, next);
    }
  }
  return out ?? value;
}

/** Walks an object's other keys, leaving `skip` to the caller. */
function walkExcept(obj: Record<string, unknown>, skip: string, visit: PayloadVisitor): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const key in obj) {
    if (key === skip) continue;
    const child = obj[key];
    if (typeof child !== "object" || child === null) continue;
    const next = walk(child, visit);
    if (next !== child) {
      out ??= { ...obj };
      out[key] = next;
    }
  }
  return out ?? obj;
}
