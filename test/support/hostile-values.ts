import fc from "fast-check";
import { makePng } from "./png.ts";
import { sha } from "./sha.ts";

/**
 * Seeded hostile values for the conformance fuzz (test/conformance/hostile-values.test.ts), and the
 * test's own model of what the prepare pipeline promises to do to them (docs/format.md, What is
 * never written): strings past `maxStringChars` cut with the suffix, canonical base64 images of
 * 1024+ characters stored as refs, everything else exactly as JSON.stringify writes it.
 */

/** Code units no text should be trusted with: NUL, lone surrogates, C0/C1, bidi marks, non-characters. */
const HOSTILE_UNITS: readonly string[] = [
  "\u0000",
  "\ud800",
  "\udbff",
  "\udc00",
  "\udfff",
  "\u0001",
  "\u0007",
  "\u0008",
  "\t",
  "\n",
  "\r",
  "\u001b",
  "\u001f",
  "\u007f",
  "\u0080",
  "\u0085",
  "\u009b",
  "\u009f",
  "\u200e",
  "\u200f",
  "\u202a",
  "\u202e",
  "\u2066",
  "\u2069",
  "\u061c",
  "\u2028",
  "\u2029",
  "\ufeff",
  "\ufffe",
  "\uffff",
  "\ud83d\ude00", // a non-BMP pair
  "\udbff\udfff", // U+10FFFF
  '"',
  "\\",
  "/",
  "a",
  "Z",
  " ",
  "é",
  "日",
];

/** The default transient keys (docs/format.md): removed at any depth before a line is written. */
const TRANSIENT_KEYS = new Set(["partialJson", "jsonlEvents"]);

export const SUFFIX = "\n\n[Session persistence truncated large content]";
/** Keys the pipeline treats specially: never produced as random keys (their rules are tested elsewhere). */
const RESERVED_KEYS = new Set([
  "type",
  "data",
  "mimeType",
  "source",
  "image_url",
  "url",
  "media_type",
  "content",
  "lineCount",
  "thinkingSignature",
  "thoughtSignature",
  "textSignature",
  "signature",
  "encrypted_content",
]);

/** The value classes of the fuzz; each case is one of them. */
export type ValueClass = "unicode" | "huge" | "image" | "nesting" | "keys" | "numbers";

/** Where a value is put: which API carries it into the store. */
export type Slot =
  | "user-message"
  | "assistant-text"
  | "message-details"
  | "custom-data"
  | "custom-type"
  | "entry-type"
  | "label"
  | "session-name"
  | "cwd"
  | "move-cwd"
  | "artifact"
  | "artifact-meta"
  | "agent-output"
  | "agent-output-id";

export interface HostileCase {
  index: number;
  valueClass: ValueClass;
  slot: Slot;
  /** A string for string slots, any JSON-ish value for object slots, an image block list for images. */
  value: unknown;
  /** The session's maxStringChars. */
  maxStringChars: number;
}

const STRING_SLOTS: readonly Slot[] = [
  "user-message",
  "assistant-text",
  "custom-type",
  "entry-type",
  "label",
  "session-name",
  "cwd",
  "move-cwd",
  "artifact",
  "artifact-meta",
  "agent-output",
  "agent-output-id",
];
const VALUE_SLOTS: readonly Slot[] = ["message-details", "custom-data", "artifact"];

const unit = fc.constantFrom(...HOSTILE_UNITS);
const shortText = fc.array(unit, { minLength: 0, maxLength: 40 }).map((a) => a.join(""));
const longText = fc.tuple(fc.array(unit, { minLength: 1, maxLength: 12 }), fc.integer({ min: 2_000, max: 60_000 })).map(([units, n]) =>
  units
    .join("")
    .repeat(Math.ceil(n / units.join("").length))
    .slice(0, n),
);
export const hostileText = fc.oneof({ arbitrary: shortText, weight: 5 }, { arbitrary: longText, weight: 1 });

/** A string just around or far past `max` units, its end near the cut made of surrogates and controls. */
const hugeText = (max: number) =>
  fc
    .tuple(
      fc.integer({ min: -3, max: 3 }),
      fc.constantFrom(0, 0, 0, 1, max),
      shortText,
      fc.constantFrom("a", "\ud83d\ude00", "\ud800", "\u0000"),
    )
    .map(([delta, extra, tail, fill]) => {
      const body = fill.repeat(Math.ceil((max + delta + extra) / fill.length));
      return (body + tail).slice(0, Math.max(1, max + delta + extra - SUFFIX.length)) + body.slice(0, SUFFIX.length) + tail;
    });

const oddKey = fc.oneof(
  fc.constantFrom(
    "__proto__",
    "",
    "\u0000",
    "a\u0000b",
    "constructor",
    "prototype",
    "toString",
    "\ud800",
    "\u202e",
    "0",
    "-1",
    "partialJson",
    "jsonlEvents",
  ),
  shortText,
);
const oddNumber = fc.constantFrom(-0, 0, 1e308, -1e308, 5e-324, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 2 ** 64, -(2 ** 63), 1.5, 0.1 + 0.2);
const scalar = fc.oneof(oddNumber, hostileText, fc.boolean(), fc.constant(null));

/** An object with odd own keys (`__proto__` as data, as JSON.parse makes it), nested a little. */
const oddObject: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(tie("node"), { maxLength: 4 }),
    fc.array(fc.tuple(oddKey, tie("node")), { maxLength: 5 }).map(ownObject),
  ),
})).node;

/** An object built with own data properties only (a `__proto__` key stays a key, as in JSON.parse). */
export function ownObject(pairs: ReadonlyArray<readonly [string, unknown]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of pairs) {
    if (RESERVED_KEYS.has(k)) continue;
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Arrays or objects nested `depth` deep around a hostile leaf (near and past V8's JSON.stringify stack). */
export function nested(depth: number, shape: "array" | "object", leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = shape === "array" ? [v] : { k: v };
  return v;
}
const deep = fc
  .tuple(
    fc.constantFrom(10, 500, 996, 997, 998, 999, 1000, 1500, 3000, 6000, 100_000),
    fc.constantFrom("array" as const, "object" as const),
    scalar,
  )
  .map(([depth, shape, leaf]) => nested(depth, shape, leaf));

/** Image blocks: valid (small to multi-MB), MIME-wrapped, not base64, short, hostile text as data. */
const imageBlocks = fc
  .array(
    fc.tuple(
      fc.constantFrom("valid", "valid", "wrapped", "invalid", "short", "hostile", "large", "url"),
      fc.integer({ min: 1, max: 1_000_000 }),
      hostileText,
    ),
    { minLength: 1, maxLength: 3 },
  )
  .map((specs) => specs.map(([kind, seed, text]) => imageBlock(kind, seed, text)));

function imageBlock(kind: string, seed: number, text: string): Record<string, unknown> {
  const png = (w: number) => makePng(w, w, seed).toString("base64");
  switch (kind) {
    case "valid":
      return { type: "image", data: png(24 + (seed % 40)), mimeType: "image/png" };
    case "large":
      return { type: "image", data: png(600 + (seed % 200)), mimeType: "image/png" };
    case "wrapped":
      return { type: "image", data: png(32).replace(/.{76}/g, "$&\n"), mimeType: "image/png" };
    case "invalid":
      return { type: "image", data: `${png(32).slice(0, 2000)}=!=${text}`, mimeType: "image/png" };
    case "short":
      return { type: "image", data: png(32).slice(0, 1020), mimeType: "image/png" };
    case "url":
      return { type: "image_url", image_url: { url: `data:image/png;base64,${png(30)}` } };
    default:
      return { type: "image", data: `${text}${"A".repeat(1100)}${text}`, mimeType: "image/png" };
  }
}

const asCase =
  (valueClass: ValueClass, slots: readonly Slot[]) =>
  (value: fc.Arbitrary<unknown>, max: fc.Arbitrary<number> = fc.constantFrom(1000, 500_000)) =>
    fc.record({ valueClass: fc.constant(valueClass), slot: fc.constantFrom(...slots), value, maxStringChars: max });

/** Every class, weighted so a default run of a few hundred cases sees each many times. */
const anyCase = fc.oneof(
  { arbitrary: asCase("unicode", STRING_SLOTS)(hostileText), weight: 4 },
  { arbitrary: asCase("unicode", VALUE_SLOTS)(oddObject), weight: 1 },
  { arbitrary: fc.constantFrom(100, 1000).chain((max) => asCase("huge", STRING_SLOTS)(hugeText(max), fc.constant(max))), weight: 2 },
  { arbitrary: asCase("huge", ["user-message", "custom-data", "artifact"])(hugeText(500_000), fc.constant(500_000)), weight: 1 },
  { arbitrary: asCase("image", ["user-message", "custom-data", "message-details", "artifact"])(imageBlocks), weight: 2 },
  { arbitrary: asCase("nesting", VALUE_SLOTS)(deep), weight: 1 },
  { arbitrary: asCase("keys", VALUE_SLOTS)(oddObject), weight: 2 },
  { arbitrary: asCase("numbers", VALUE_SLOTS)(fc.array(oddNumber, { minLength: 1, maxLength: 6 })), weight: 1 },
  { arbitrary: asCase("numbers", VALUE_SLOTS)(fc.constant([1, 2n ** 70n])), weight: 1 },
);

/** `runs` cases drawn from `seed` (the same list every time for the same pair). */
export function hostileCases(seed: number, runs: number): HostileCase[] {
  return fc.sample(anyCase, { seed, numRuns: runs }).map((c, index) => ({ ...c, index }) as HostileCase);
}

// ---------------------------------------------------------------- the model of the pipeline

/** docs/format.md: at most `max` units including the suffix, never splitting a surrogate pair. */
export function cutString(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = max - SUFFIX.length;
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  return text.slice(0, cut) + SUFFIX;
}

const isCanonical = (b64: string) => b64.length > 0 && Buffer.from(b64, "base64").toString("base64") === b64;
const refOf = (bytes: Buffer) => `blob:sha256:${sha(bytes)}`;

/** An image payload as stored (`"stored"`) and as an eager open gives it back (`"read"`). */
function imagePayload(data: string, as: "stored" | "read"): string {
  if (data.length < 1024) return data;
  if (isCanonical(data)) return as === "stored" ? refOf(Buffer.from(data, "base64")) : data;
  // Only MIME's whitespace (docs/format.md): U+2028, U+00A0 and the like make a payload no base64.
  const bare = data.replace(/[\r\n\t ]/g, "");
  if (bare !== data && isCanonical(bare)) return as === "stored" ? refOf(Buffer.from(bare, "base64")) : bare;
  return data; // not base64: kept inline, whole
}

/**
 * What the store should hold for `value` (as the manager kept it), or give back on an eager open:
 * cuts and image refs as docs/format.md states; `toJson` then writes it as JSON.stringify would.
 * Iterative, like `toJson`: values nested past the stack are compared too.
 */
export function expectedValue(value: unknown, max: number, as: "stored" | "read"): unknown {
  const box: Record<string, unknown> = {};
  const work: Array<[Record<string, unknown> | unknown[], string | number, unknown]> = [[box, "v", value]];
  while (work.length > 0) {
    const [into, key, v] = work.pop()!;
    let out: unknown = v;
    if (typeof v === "string") out = cutString(v, max);
    else if (Array.isArray(v)) {
      const copy: unknown[] = new Array(v.length);
      for (let i = 0; i < v.length; i++) work.push([copy, i, v[i]]);
      out = copy;
    } else if (v !== null && typeof v === "object") {
      const o = v as Record<string, unknown>;
      const copy: Record<string, unknown> = {};
      for (const k of Object.keys(o)) {
        if (TRANSIENT_KEYS.has(k)) continue; // stripped at any depth
        // defined here (keeping key order), replaced when the work item is taken
        define(copy, k, o[k]);
        if (k === "data" && o.type === "image" && typeof o.data === "string") define(copy, k, imagePayload(o.data, as));
        else if (k === "url" && typeof o.url === "string" && o.url.startsWith("data:image/"))
          define(copy, k, as === "stored" && o.url.length >= 1024 ? refOf(Buffer.from(o.url, "utf8")) : o.url);
        else work.push([copy, k, o[k]]);
      }
      out = copy;
    }
    if (Array.isArray(into)) into[key as number] = out;
    else define(into, key as string, out);
  }
  return box.v;
}

const define = (o: Record<string, unknown>, k: string, v: unknown) =>
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });

const jsonable = (x: unknown) => x !== undefined && typeof x !== "function" && typeof x !== "symbol";

/** `JSON.stringify` of plain data without recursion (a value nested past the stack is written too). */
export function toJson(root: unknown): string {
  const out: string[] = [];
  type Work = { lit: string } | { val: unknown };
  const work: Work[] = [{ val: root }];
  while (work.length > 0) {
    const item = work.pop()!;
    if ("lit" in item) {
      out.push(item.lit);
      continue;
    }
    const v = item.val;
    if (typeof v === "number") out.push(Number.isFinite(v) ? JSON.stringify(v) : "null");
    else if (typeof v === "string" || typeof v === "boolean" || v === null) out.push(JSON.stringify(v));
    else {
      const parts: Work[] = [];
      if (Array.isArray(v)) {
        parts.push({ lit: "[" });
        for (let i = 0; i < v.length; i++) {
          if (i > 0) parts.push({ lit: "," });
          parts.push(jsonable(v[i]) ? { val: v[i] } : { lit: "null" });
        }
        parts.push({ lit: "]" });
      } else {
        const o = v as Record<string, unknown>;
        parts.push({ lit: "{" });
        const keys = Object.keys(o).filter((k) => jsonable(o[k]));
        for (let i = 0; i < keys.length; i++) parts.push({ lit: `${i > 0 ? "," : ""}${JSON.stringify(keys[i])}:` }, { val: o[keys[i]!] });
        parts.push({ lit: "}" });
      }
      for (let i = parts.length - 1; i >= 0; i--) work.push(parts[i]!);
    }
  }
  return out.join("");
}

/** One-line description of a value for a report (class, length, first code units escaped). */
export function describeValue(value: unknown): string {
  const text = typeof value === "string" ? value : toJson(value);
  const head = JSON.stringify(text.slice(0, 60)).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return `${head}${text.length > 60 ? `…(${text.length} units)` : ""}`;
}
